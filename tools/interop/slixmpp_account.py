"""What the interop scripts share about slixmpp clients of a loopback
swiftletd: a client that trusts the server's certificate, in-band
registration (XEP-0077) of a fresh account, a peer that records the
messages it gets, and the steps a scenario is made of.

Imported by the scripts beside it (Python puts a script's own directory
first on its module path).
"""
import asyncio
import secrets
import sys

import slixmpp
from slixmpp.exceptions import IqError
from slixmpp.plugins.xep_0004 import Form


def make_client(jid, password, ca_certificate, plugins):
    """A `ClientXMPP` for `jid` that uses STARTTLS (not direct TLS),
    verifies the server against `ca_certificate`, and has `plugins`."""
    client = slixmpp.ClientXMPP(jid, password)
    client.enable_direct_tls = False
    client.ca_certs = ca_certificate
    for plugin in plugins:
        client.register_plugin(plugin)
    return client


def submit_form(form_type, fields):
    """A slixmpp data form (XEP-0004) of type submit: the hidden
    FORM_TYPE `form_type`, then `fields` (var: value)."""
    form = Form()
    form["type"] = "submit"
    form.add_field(var="FORM_TYPE", ftype="hidden", value=form_type)
    for var, value in fields.items():
        form.add_field(var=var, value=value)
    return form


async def register(client, host, port, username, password, timeout):
    """Creates the account `username` over `client` (which needs the
    xep_0077 plugin), then disconnects; raises if the server refuses."""
    client.plugin["xep_0077"].force_registration = True
    outcome = asyncio.get_running_loop().create_future()

    async def on_register(_event):
        iq = client.Iq()
        iq["type"] = "set"
        iq["register"]["username"] = username
        iq["register"]["password"] = password
        try:
            await iq.send(timeout=timeout)
            outcome.set_result(None)
        except IqError as error:
            outcome.set_exception(RuntimeError(f"registration refused: {error.iq['error']['condition']}"))

    client.add_event_handler("register", on_register)
    client.connect(host=host, port=port)
    try:
        await outcome
    finally:
        await client.disconnect()


class Records:
    """What a scenario waits on: a subclass records events as they arrive
    and calls `changed()`; the scenario waits with `until()`."""

    def __init__(self):
        self._change = asyncio.Event()

    def changed(self):
        """Wakes every `until()` to look at the records again."""
        self._change.set()
        self._change = asyncio.Event()

    async def until(self, predicate, poll=None):
        """Returns once `predicate()` holds (the step's deadline bounds the
        wait); with `poll`, it also looks every `poll` seconds, for state
        that changes without an event."""
        while not predicate():
            try:
                await asyncio.wait_for(self._change.wait(), poll)
            except asyncio.TimeoutError:
                pass


class Peer(Records):
    """A fresh account on the server under test with one client: it
    registers, logs in with `resource` and sends its presence, and appends
    `record(message)` to `messages` for every chat or normal message with
    a body that it receives."""

    def __init__(self, server, name, plugins, resource, record, timeout):
        super().__init__()
        self.server = server
        self.user = name + secrets.token_hex(4)
        self.jid = f"{self.user}@{server['domain']}"
        self.password = "pw-" + secrets.token_hex(6)
        self.client = None
        self.messages = []
        self._plugins = plugins
        self._resource = resource
        self._record = record
        self._timeout = timeout

    def _client(self, jid, register=False):
        plugins = self._plugins + (("xep_0077",) if register else ())
        return make_client(jid, self.password, self.server["ca"], plugins)

    async def register(self):
        await register(
            self._client(self.jid, register=True), self.server["host"], self.server["port"], self.user,
            self.password, self._timeout)

    async def login(self):
        client = self._client(f"{self.jid}/{self._resource}")
        started = asyncio.get_running_loop().create_future()

        def on_start(_event):
            client.send_presence()
            started.set_result(None)

        def on_message(message):
            if message["type"] in ("chat", "normal") and message["body"]:
                self.messages.append(self._record(message))
                self.changed()

        client.add_event_handler("session_start", on_start)
        client.add_event_handler("message", on_message)
        self.client = client
        client.connect(host=self.server["host"], port=self.server["port"])
        await started

    async def logout(self):
        """Disconnects, if logged in."""
        if self.client is not None:
            await self.client.disconnect()
            self.client = None


def require(condition, detail):
    """Fails the current step with `detail` unless `condition` holds."""
    if not condition:
        raise AssertionError(detail)


async def step(name, coroutine, timeout):
    """Runs one named step of a scenario: prints `ok` with what it
    returned, or `FAIL` with the error and ends the run with status 1."""
    try:
        detail = await asyncio.wait_for(coroutine, timeout)
    except Exception as error:  # any failure ends the run with the step's name
        print(f"FAIL {name}: {error!r}")
        sys.exit(1)
    print(f"ok   {name}" + (f": {detail}" if detail else ""))
