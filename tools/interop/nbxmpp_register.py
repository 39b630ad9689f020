#!/usr/bin/env python3
"""XEP-0077 in-band registration with nbxmpp, Gajim's XMPP library, using
the data form (XEP-0077 §6) the way Gajim's account wizard does, against a
running swiftletd (loopback only).

Gajim signs up by connecting an nbxmpp client in register mode (STARTTLS,
then no authentication: nbxmpp reports the connection as soon as the
secured stream offers the iq-register feature), asking for the form with
request_register_form(), preferring the data form over the legacy fields,
filling in its fields, turning it into a submit form and handing it to
submit_register_form(). Then it logs in with the new account. This script
does the same, one connection at a time, with the server's certificate
verified against its local CA:
  1. a register-mode connection gets the form: a data form with FORM_TYPE
     jabber:iq:register and username and password fields,
  2. the filled-in form (a fresh random username) creates the account,
  3. a second register-mode connection submitting the same username gets
     a conflict error,
  4. a normal connection logs in with the new account (SCRAM, whichever
     way nbxmpp picks) and binds a resource; it closes the stream, and so
     does the server.
Prints one line per step and exits non-zero on the first failure, after
what nbxmpp sent and received on the failing connection (on every
connection, after success too, with NBXMPP_REGISTER_TRACE=1). Every step
has a deadline, so the script always ends by itself.

Usage: nbxmpp_register.py HOST PORT DOMAIN CA_CERTIFICATE
(CA_CERTIFICATE is the server's local CA root, GLib's trust store for
the run.)
"""
import os
import re
import secrets
import sys

import gi

gi.require_version("GLib", "2.0")
from gi.repository import GLib  # noqa: E402

import nbxmpp_support  # noqa: E402
from nbxmpp.const import Mode, StreamError  # noqa: E402
from nbxmpp.errors import RegisterStanzaError, StanzaError  # noqa: E402

STEP_TIMEOUT = 20
REGISTER = "jabber:iq:register"
DATA_FORMS = "jabber:x:data"


class Failed(Exception):
    """A step went wrong; the message says how."""


class Connection:
    """One nbxmpp client on a GLib main loop of its own, from connecting to
    a closed stream. `run` returns once the stream is closed (`close`), or
    on a failure (`fail`, a deadline passed, nbxmpp disconnected)."""

    def __init__(self, target, mode, username=None, password=None):
        host, port, domain, ca_certificate = target
        self.loop = GLib.MainLoop()
        self.failure = None
        self.finished = False
        self.closing = None
        self.timer = None
        self.sent = []
        self.received = []
        client = nbxmpp_support.starttls_client(host, port, domain, ca_certificate, self.sent, self.received)
        client.set_mode(mode)
        if username is not None:
            client.set_username(username)
            client.set_password(password)
            client.set_resource("nbxmpp-register")
        client.subscribe("connected", self._on_connected)
        client.subscribe("connection-failed", self._on_connection_failed)
        client.subscribe("disconnected", self._on_disconnected)
        self.client = client
        self.on_ready = None
        self.callbacks = []

    def run(self, what, on_ready):
        """Connects, calls `on_ready(self)` once nbxmpp reports the
        connection, and runs the loop until the connection is done with."""
        self.on_ready = on_ready
        self.arm(what)
        self.client.connect()
        self.loop.run()
        return self.failure

    def arm(self, what):
        """Starts the deadline of the next thing to wait for."""
        self._remove_timer()
        self.timer = GLib.timeout_add_seconds(STEP_TIMEOUT, self._on_timeout, what)

    def guarded(self, callback):
        """`callback` for an nbxmpp task, with a `Failed` it raises (or any
        surprise) turned into this connection's failure. nbxmpp holds task
        callbacks by weak reference, so the connection keeps the wrapper."""

        def run(task):
            if self.finished:
                return
            try:
                callback(task)
            except Failed as failure:
                self.fail(str(failure))
            except Exception as error:  # noqa: BLE001 - reported, not swallowed
                self.fail(f"{type(error).__name__}: {error}")

        self.callbacks.append(run)
        return run

    def fail(self, why):
        if self.finished:
            return
        self.failure = why
        self._stop()
        if self.client.state.name not in ("DISCONNECTED", "DISCONNECTING"):
            self.client.disconnect(immediate=True)

    def close(self, then):
        """Ends the stream the polite way (nbxmpp sends </stream:stream>
        and waits for the server's) and calls `then()` once the server
        closed its side without a stream error."""
        self.closing = then
        self.arm("for the server to close its stream")
        self.client.disconnect()

    def transcript(self):
        return [f"  > {data}" for data in self.sent] + [f"  < {data}" for data in self.received]

    def _stop(self):
        self.finished = True
        self._remove_timer()
        GLib.idle_add(self.loop.quit)

    def _remove_timer(self):
        if self.timer is not None:
            GLib.source_remove(self.timer)
            self.timer = None

    def _on_timeout(self, what):
        self.timer = None
        self.fail(f"timed out {what}")
        return GLib.SOURCE_REMOVE

    def _on_connected(self, _client, _signal):
        if self.finished:
            return
        try:
            self.on_ready(self)
        except Failed as failure:
            self.fail(str(failure))

    def _on_connection_failed(self, client, _signal):
        if not self.finished:
            self.fail(f"connection failed: {client.get_error()}")

    def _on_disconnected(self, client, _signal):
        if self.finished:
            return
        domain, error, text = client.get_error()
        if self.closing is None:
            return self.fail(f"disconnected: {domain}, {error}, {text}")
        if domain != StreamError.STREAM or error != "stream-end":
            return self.fail(f"the stream did not end cleanly: {domain}, {error}, {text}")
        then, self.closing = self.closing, None
        self._stop()
        then()


def form_of(task):
    """The data form of a request_register_form() answer, checked, as
    Gajim would pick it (the data form over the legacy fields)."""
    try:
        data = task.finish()
    except StanzaError as error:
        raise Failed(f"the form request was answered with an error: {error}") from error
    form = data.form
    if form is None:
        raise Failed(f"no data form in the answer; legacy fields: {data.fields_form}")
    if form.is_fake_form():
        raise Failed("nbxmpp made the form up from the legacy fields")
    if form.type_ != "form":
        raise Failed(f"the data form has type {form.type_!r}")
    form_type = form.vars.get("FORM_TYPE")
    if form_type is None or form_type.value != REGISTER or form_type.type_ != "hidden":
        raise Failed(f"FORM_TYPE is {form_type}")
    fields = {field.var: field for field in form.iter_fields() if field.var != "FORM_TYPE"}
    for name, kind in (("username", "text-single"), ("password", "text-private")):
        field = fields.get(name)
        if field is None:
            raise Failed(f"the data form has no {name} field: {form}")
        if field.type_ != kind or not field.required:
            raise Failed(f"the {name} field is {field.type_}, required {field.required}")
    return data, form, fields


def fill(form, username, password):
    """What Gajim's data form widget does: the entries write into the
    form's fields, then the form becomes a submit form."""
    form["username"].value = username
    form["password"].value = password
    form.type_ = "submit"
    return form


def sent_submitted_form(connection):
    """Whether the last register set nbxmpp sent carried a submitted data
    form rather than the legacy fields."""
    sets = [data for data in connection.sent if REGISTER in data and "type=\"set\"" in data]
    return bool(sets) and DATA_FORMS in sets[-1] and "type=\"submit\"" in sets[-1]


class Steps:
    def __init__(self, target):
        self.target = target
        self.domain = target[2]
        self.username = f"nbreg-{secrets.token_hex(4)}"
        self.password = f"nb-reg-{secrets.token_hex(6)}-pässword"
        self.connection = None
        self.connections = []

    def connect(self, mode, what, on_ready, username=None, password=None):
        self.connection = Connection(self.target, mode, username, password)
        self.connections.append(self.connection)
        failure = self.connection.run(what, on_ready)
        if failure:
            raise Failed(failure)

    def run(self):
        self.connect(Mode.REGISTER, "connecting in register mode and getting the form", self.register)
        self.connect(Mode.REGISTER, "registering the same username again", self.register_again)
        self.connect(Mode.CLIENT, "logging in with the new account", self.log_in, self.username, self.password)

    # Steps 1 and 2

    def register(self, connection):
        connection.arm("for the registration form")
        module = connection.client.get_module("Register")
        module.request_register_form(callback=connection.guarded(self.on_form))

    def on_form(self, task):
        data, form, fields = form_of(task)
        described = ", ".join(
            f"{name} ({field.type_}{', required' if field.required else ''})" for name, field in fields.items())
        legacy = "; the legacy fields too" if data.fields_form is not None else "; no legacy fields"
        print(
            f"ok   register mode over STARTTLS: got a data form, FORM_TYPE {REGISTER}, fields {described}{legacy}",
            flush=True)
        self.connection.arm("for the answer to the submitted form")
        self.connection.client.get_module("Register").submit_register_form(
            fill(form, self.username, self.password), callback=self.connection.guarded(self.on_registered))

    def on_registered(self, task):
        try:
            task.finish()
        except StanzaError as error:
            raise Failed(f"the submitted form was refused: {error}") from error
        if not sent_submitted_form(self.connection):
            raise Failed("nbxmpp did not send a submitted data form")
        print(f"ok   registered {self.username}@{self.domain} by submitting the data form", flush=True)
        self.connection.close(lambda: None)

    # Step 3

    def register_again(self, connection):
        connection.arm("for the registration form, again")
        module = connection.client.get_module("Register")
        module.request_register_form(callback=connection.guarded(self.on_form_again))

    def on_form_again(self, task):
        _data, form, _fields = form_of(task)
        self.connection.arm("for the answer to the second submission")
        self.connection.client.get_module("Register").submit_register_form(
            fill(form, self.username, "another-password"), callback=self.connection.guarded(self.on_conflict))

    def on_conflict(self, task):
        try:
            task.finish()
        except StanzaError as error:
            if error.condition != "conflict":
                raise Failed(f"a taken username was refused with {error.condition}, not conflict: {error}") from error
            kind = "RegisterStanzaError" if isinstance(error, RegisterStanzaError) else type(error).__name__
            print(
                f"ok   the same username again: {kind} conflict (type {error.type}, text {error.get_text()!r})",
                flush=True)
            self.connection.close(lambda: None)
            return
        raise Failed(f"a second registration of {self.username} was accepted")

    # Step 4

    def log_in(self, connection):
        client = connection.client
        jid = client.get_bound_jid()
        if jid is None or str(jid.bare) != f"{self.username}@{self.domain}" or not jid.resource:
            raise Failed(f"bound as {jid}")
        mechanism = "an unknown mechanism"
        for data in connection.sent:
            if "<authenticate" in data or "<auth " in data:
                found = re.search(r"mechanism=[\"']([^\"']+)", data)
                sasl = "SASL2" if "<authenticate" in data else "RFC 6120 SASL"
                mechanism = f"{found.group(1) if found else '?'} ({sasl})"
                break
        if "SCRAM" not in mechanism:
            raise Failed(f"nbxmpp logged in with {mechanism}, not SCRAM")

        def closed():
            print(
                f"ok   logged in as the new account with {mechanism}, bound {jid}, and closed the stream cleanly",
                flush=True)

        connection.close(closed)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    steps = Steps(tuple(sys.argv[1:]))
    try:
        steps.run()
    except Failed as failure:
        print(f"FAIL {failure}", flush=True)
        if steps.connection is not None:
            print("what nbxmpp sent (>) and received (<) on that connection:", flush=True)
            print("\n".join(steps.connection.transcript()), flush=True)
        sys.exit(1)
    print("ok   all nbxmpp registration steps passed", flush=True)
    if os.environ.get("NBXMPP_REGISTER_TRACE") == "1":
        for number, connection in enumerate(steps.connections, 1):
            print(f"connection {number}: what nbxmpp sent (>) and received (<)", flush=True)
            print("\n".join(connection.transcript()), flush=True)


if __name__ == "__main__":
    main()
