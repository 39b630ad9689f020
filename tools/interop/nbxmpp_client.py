#!/usr/bin/env python3
"""What a desktop client does after login, done with nbxmpp, Gajim's XMPP
library, by two accounts (alice and bob, which exist already) against a
running swiftletd (loopback only).

Both connect over STARTTLS with the server's local CA as GLib's default
trust store, which is also what libsoup uses for HTTPS, so every TLS
connection is verified for real: no pinned certificate, no ignored
errors. The steps, each through nbxmpp's own modules:
  1. login    a connection whose trust store is the system's (which lacks
              the CA) is refused: nbxmpp reports a bad certificate with
              the unknown-CA flag and sends nothing after STARTTLS. Then
              alice and bob log in with the CA as the trust store; the
              certificate nbxmpp got has no errors, and verifies against
              the CA for the domain,
  2. roster   both fetch their rosters (Roster.request_roster) and send
              initial presence; alice asks for bob's presence
              (BasePresence.subscribe), bob approves and asks back, alice
              approves. Roster pushes end with "both" on both sides, so do
              fresh roster fetches, and each sees the other available,
  3. chat     alice's chat message to bob's bare JID reaches bob; bob's
              reply to the full JID it came from reaches alice,
  4. offline  bob closes his stream cleanly (alice sees him unavailable);
              alice writes; bob logs in again and, after his initial
              presence, gets the message with an XEP-0203 delay stamp from
              the server, and alice sees him available again,
  5. upload   alice finds the XEP-0363 service among the domain's disco
              items (HTTPUpload feature, a size limit that allows the
              file), gets a slot (HTTPUpload.request_slot) for 30 000
              random bytes, PUTs them with libsoup as Gajim does, and sends
              bob the https:// GET URL as body and XEP-0066 oob; bob
              downloads it with libsoup, trusting only the CA, and gets the
              same bytes, while a libsoup session with the system's trust
              store refuses the server's certificate,
  6. avatar   alice publishes a small PNG as her XEP-0084 avatar
              (UserAvatar.set_avatar, access model "presence"); bob reads
              her metadata and the data (request_avatar_metadata,
              request_avatar_data) and both match the PNG's SHA-1, size
              and type,
  7. mam      bob queries his archive (XEP-0313, urn:xmpp:mam:2) for what
              he exchanged with alice (MAM.make_query with `with`): the
              messages of steps 3 to 5, in order, with their text and
              direction, and the fin is complete,
  8. close    both close their streams, and the server closes its side
              without a stream error.
Prints one `ok   STEP: ...` line per step, or `FAIL STEP: why` followed by
the last stanzas each account sent and received, and exits non-zero on
the first failure. Each step has a 20 s deadline, so the script always
ends by itself. The accounts' rosters must be empty at the start.

Usage: nbxmpp_client.py HOST PORT DOMAIN CA_CERTIFICATE ALICE BOB PASSWORD
(ALICE and BOB are usernames, PASSWORD the password of both;
CA_CERTIFICATE is the server's local CA root, GLib's trust store for the
run.)
"""
import hashlib
import secrets
import struct
import sys
import time
import zlib

import gi

gi.require_version("GLib", "2.0")
gi.require_version("Gio", "2.0")
gi.require_version("Soup", "3.0")
from gi.repository import Gio, GLib, Soup  # noqa: E402

import nbxmpp_support  # noqa: E402
from nbxmpp.const import StreamError  # noqa: E402
from nbxmpp.modules.user_avatar import Avatar  # noqa: E402
from nbxmpp.namespaces import Namespace  # noqa: E402
from nbxmpp.protocol import JID, Message, NodeProcessed  # noqa: E402
from nbxmpp.structs import StanzaHandler  # noqa: E402

STEP_TIMEOUT = 20
UPLOAD_SIZE = 30_000
# How many of an account's last stanzas a failure shows.
TRANSCRIPT_TAIL = 25


class Failed(Exception):
    """A check did not hold; the message says how."""


def tiny_png(width=12, height=12):
    """A valid PNG (RGB, 8 bits a sample) with a pattern of its own."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(
        b"\x00" + b"".join(bytes((200 - x * 8, 40 + y * 12, (x * y) % 256)) for x in range(width))
        for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def describe(error):
    """An nbxmpp error (or any exception) in a line."""
    return f"{type(error).__name__}: {error}"


class Pending:
    """The outcome of something asynchronous: an nbxmpp task or an HTTP
    request. `keep` holds what must live until it ends (nbxmpp holds task
    callbacks by weak reference; libsoup needs its session)."""

    def __init__(self):
        self.done = False
        self.result = None
        self.error = None
        # For HTTPS: what GLib found wrong with the server's certificate.
        self.tls_errors = None
        self.keep = []


class Account:
    """One user: the current nbxmpp client, and what it has received since
    it connected, as the steps check it."""

    def __init__(self, run, username, password):
        self.run = run
        self.username = username
        self.password = password
        self.jid = JID.from_string(f"{username}@{run.domain}")
        self.client = None
        # The full JID of the current connection.
        self.jid_full = None
        self.connections = 0
        self.sent = []
        self.received = []
        self.reset()

    def reset(self):
        self.signals = []
        self.messages = []
        self.presences = []
        self.pushes = []
        self.closing = False
        self.probing = False

    def connect(self, trust=None):
        """A new client (nbxmpp's way to log in again) for this account,
        connecting. `trust` replaces the CA as the trust store when given,
        for a connection expected to fail."""
        self.reset()
        self.connections += 1
        self.sent.append(f"--- connection {self.connections}")
        self.received.append(f"--- connection {self.connections}")
        run = self.run
        client = nbxmpp_support.starttls_client(
            run.host, run.port, run.domain, run.ca_certificate, self.sent, self.received)
        if trust is not None:
            # The trust store is process-wide and read when the TLS
            # handshake starts, so this connection gets `trust` instead.
            self.probing = True
            Gio.TlsBackend.get_default().set_default_database(trust)
        client.set_username(self.username)
        client.set_password(self.password)
        client.set_resource(f"nbxmpp-{self.connections}")
        for signal in ("connected", "connection-failed", "disconnected"):
            client.subscribe(signal, self._on_signal)
        client.register_handler(StanzaHandler(name="message", callback=self._on_message))
        client.register_handler(StanzaHandler(name="presence", callback=self._on_presence))
        client.register_handler(
            StanzaHandler(name="iq", callback=self._on_roster_push, typ="set", ns=Namespace.ROSTER))
        self.client = client
        client.connect()

    def module(self, name):
        return self.client.get_module(name)

    def close(self):
        """Ends the stream the polite way: nbxmpp sends </stream:stream> and
        waits for the server's."""
        self.closing = True
        self.client.disconnect()

    def signal(self, name):
        """The error nbxmpp reported with the latest `name` signal, as
        (domain, condition, text), if that signal came."""
        for signal, error in reversed(self.signals):
            if signal == name:
                return error
        return None

    def _on_signal(self, client, signal):
        error = client.get_error()
        self.signals.append((signal, error))
        if signal != "connected" and not self.closing and not self.probing:
            self.run.fail(f"{self.username}'s connection ended unexpectedly ({signal}): {error}")
            return
        self.run.poke()

    def _on_message(self, _client, stanza, properties):
        self.messages.append((stanza, properties))
        self.run.poke()

    def _on_presence(self, _client, _stanza, properties):
        self.presences.append(properties)
        self.run.poke()

    def _on_roster_push(self, _client, _stanza, properties):
        if properties.roster is not None:
            self.pushes.append(properties.roster.item)
            self.run.poke()
        # The Roster module has answered the push; without this, nbxmpp's
        # default handler would answer it again, with an error.
        raise NodeProcessed

    # What the steps look for

    def presence_from(self, jid, kind, full=False):
        """The latest presence of type `kind` (a PresenceType name) from
        `jid`'s bare JID (with a resource if `full`)."""
        for properties in reversed(self.presences):
            if properties.jid.bare_match(jid) and properties.type.name == kind:
                if not full or properties.jid.resource:
                    return properties
        return None

    def push_for(self, jid, subscription, ask=None):
        """A roster push for `jid` with `subscription` (and `ask`)."""
        for item in self.pushes:
            if item.jid.bare_match(jid) and item.subscription == subscription and item.ask == ask:
                return item
        return None

    def message_with(self, body):
        """A received message (not an archive result) with `body`."""
        for stanza, properties in self.messages:
            if properties.mam is None and properties.body == body:
                return stanza, properties
        return None

    def transcript(self):
        def line(direction, data):
            text = " ".join(str(data).split())
            return f"  {direction} {text[:400]}{' ...' if len(text) > 400 else ''}"

        return ([f"{self.username} sent (last {TRANSCRIPT_TAIL}):"]
                + [line(">", data) for data in self.sent[-TRANSCRIPT_TAIL:]]
                + [f"{self.username} received (last {TRANSCRIPT_TAIL}):"]
                + [line("<", data) for data in self.received[-TRANSCRIPT_TAIL:]])


class Run:
    """The steps, as a generator on the GLib main loop: it yields what it
    waits for, with a predicate, and resumes with the predicate's value
    once that is true. Every event of the clients re-checks it."""

    def __init__(self, host, port, domain, ca_certificate, alice, bob, password):
        # GLib's default trust store before the scripts make it the CA: the
        # system's, which does not hold the server's CA.
        self.system_trust = Gio.TlsBackend.get_default().get_default_database()
        self.host = host
        self.port = port
        self.domain = domain
        self.ca_certificate = ca_certificate
        self.alice = Account(self, alice, password)
        self.bob = Account(self, bob, password)
        self.tag = secrets.token_hex(3)
        self.loop = GLib.MainLoop()
        self.step = "start"
        self.failure = None
        self.finished = False
        self.waiting = None
        self.scheduled = False
        self.timer = None
        self.steps = None
        self.keep = []
        # The messages between alice and bob, in the order sent:
        # (sender, body).
        self.exchanged = []

    def main(self):
        self.steps = self.script()
        self.poke()
        self.loop.run()
        return self.failure

    # The machinery

    def begin(self, step):
        """Starts `step`, with its deadline."""
        self.step = step
        if self.timer is not None:
            GLib.source_remove(self.timer)
        self.timer = GLib.timeout_add_seconds(STEP_TIMEOUT, self._on_timeout)

    def passed(self, detail):
        print(f"ok   {self.step}: {detail}", flush=True)

    def wait(self, what, predicate):
        """Waits until `predicate()` is true (it may raise `Failed`), and
        returns its value."""
        return (yield what, predicate)

    def outcome(self, what, pending):
        """Waits for `pending` and returns its result, or fails with its
        error."""
        yield from self.wait(what, lambda: pending.done)
        if pending.error is not None:
            raise Failed(f"{what}: {describe(pending.error)}")
        return pending.result

    def task(self, start, *args, **kwargs):
        """Starts an nbxmpp task (a module method that takes `callback=`)
        and returns its `Pending`."""
        pending = Pending()

        def done(task):
            try:
                pending.result = task.finish()
            except Exception as error:  # noqa: BLE001 - the step reports it
                pending.error = error
            pending.done = True
            self.poke()

        pending.keep.append(done)
        self.keep.append(pending)
        start(*args, callback=done, **kwargs)
        return pending

    def http(self, method, url, body=None, content_type=None, headers=None, trust=None):
        """An HTTP request with libsoup 3 on this loop, as Gajim makes them;
        the `Pending` ends with (status, body bytes). The session trusts
        GLib's default store (the CA) unless `trust` is given."""
        pending = Pending()
        session = Soup.Session()
        session.set_timeout(STEP_TIMEOUT)
        if trust is not None:
            session.set_tls_database(trust)
        message = Soup.Message.new(method, url)
        if body is not None:
            message.set_request_body_from_bytes(content_type, GLib.Bytes.new(body))
        for name, value in (headers or {}).items():
            message.get_request_headers().append(name, value)

        def done(session, result, _data):
            try:
                data = session.send_and_read_finish(result).get_data() or b""
                pending.result = (int(message.get_status()), bytes(data))
            except GLib.Error as error:
                pending.error = error
            pending.tls_errors = message.get_tls_peer_certificate_errors()
            pending.done = True
            self.poke()

        pending.keep += [session, message]
        self.keep.append(pending)
        session.send_and_read_async(message, GLib.PRIORITY_DEFAULT, None, done, None)
        return pending

    def poke(self):
        """Something happened: re-check what the steps wait for, from the
        loop (not from inside nbxmpp's callback)."""
        if not self.scheduled and not self.finished:
            self.scheduled = True
            GLib.idle_add(self._advance)

    def _advance(self):
        self.scheduled = False
        try:
            while not self.finished:
                if self.waiting is None:
                    self.waiting = next(self.steps)
                    continue
                _what, predicate = self.waiting
                value = predicate()
                if not value:
                    break
                self.waiting = self.steps.send(value)
        except StopIteration:
            self._stop()
        except Failed as failure:
            self.fail(str(failure))
        except Exception as error:  # noqa: BLE001 - reported, not swallowed
            self.fail(describe(error))
        return GLib.SOURCE_REMOVE

    def _on_timeout(self):
        self.timer = None
        what = self.waiting[0] if self.waiting is not None else "the step to end"
        self.fail(f"timed out waiting for {what}")
        return GLib.SOURCE_REMOVE

    def fail(self, why):
        if self.finished:
            return
        self.failure = f"{self.step}: {why}"
        for account in (self.alice, self.bob):
            client = account.client
            account.closing = True
            if client is not None and client.state.name not in ("DISCONNECTED", "DISCONNECTING"):
                client.disconnect(immediate=True)
        self._stop()

    def _stop(self):
        self.finished = True
        if self.timer is not None:
            GLib.source_remove(self.timer)
            self.timer = None
        GLib.idle_add(self.loop.quit)

    # The steps

    def script(self):
        yield from self.login()
        yield from self.roster()
        yield from self.chat()
        yield from self.offline()
        yield from self.upload()
        yield from self.avatar()
        yield from self.mam()
        yield from self.close()

    def connected(self, account):
        """Waits for `account`'s client to report the connection."""
        yield from self.wait(f"{account.username} to log in", lambda: account.signal("connected") is not None)
        return account.client.get_bound_jid()

    def login(self):
        self.begin("login")
        alice, bob = self.alice, self.bob
        alice.connect(trust=self.system_trust)
        signal = yield from self.wait(
            "the connection with the system's trust store to end",
            lambda: next((name for name, _ in alice.signals), None))
        if signal == "connected":
            raise Failed("nbxmpp logged in trusting only the system's trust store, which lacks the CA")
        domain, condition, _text = alice.client.get_error()
        certificate, errors = alice.client.peer_certificate
        if domain != StreamError.BAD_CERTIFICATE or certificate is None:
            raise Failed(f"the connection without the CA ended with {signal} {domain}, {condition}; "
                         "expected a bad certificate")
        if errors is None or Gio.TlsCertificateFlags.UNKNOWN_CA not in errors:
            raise Failed(f"the certificate's errors without the CA are {errors}, without UNKNOWN_CA")
        after = alice.sent[alice.sent.index(f"--- connection {alice.connections}"):]
        if any("<auth" in data or "<authenticate" in data for data in after):
            raise Failed("nbxmpp went on to authenticate over the unverified connection")
        flags = ", ".join(sorted(flag.first_value_nick for flag in errors))
        refused = f"the system's trust store: {signal}, {condition} ({flags})"

        # From here on, the CA is the trust store.
        alice.connect()
        bob.connect()
        details = []
        ca = Gio.TlsCertificate.new_from_file(self.ca_certificate)
        for account in (alice, bob):
            jid = yield from self.connected(account)
            client = account.client
            if jid is None or not jid.bare_match(account.jid) or not jid.resource:
                raise Failed(f"{account.username} bound {jid}")
            certificate, errors = client.peer_certificate
            if not client.is_stream_secure or certificate is None:
                raise Failed(f"{account.username}'s stream is not secured by TLS")
            if errors:
                raise Failed(f"{account.username}'s certificate has errors {errors}")
            if client.ignore_tls_errors or client.ignored_tls_errors:
                raise Failed(f"{account.username}'s client ignores TLS errors")
            flags = certificate.verify(Gio.NetworkAddress.new(self.domain, 0), ca)
            if flags:
                raise Failed(f"the server's certificate does not verify against the CA for {self.domain}: {flags}")
            account.jid_full = jid
            details.append(str(jid))
        version = client.tls_version.value_nick if client.tls_version is not None else "TLS"
        self.passed(f"refused with {refused}; with the CA, bound {' and '.join(details)} over STARTTLS "
                    f"({version}, {client.ciphersuite}), certificate verified for {self.domain}")

    def roster(self):
        self.begin("roster")
        alice, bob = self.alice, self.bob
        for account in (alice, bob):
            roster = yield from self.outcome(
                f"{account.username}'s roster", self.task(account.module("Roster").request_roster))
            if roster.items:
                raise Failed(f"{account.username}'s roster is not empty at the start: {roster.items}")
            account.module("BasePresence").send()
        # Each client's own available presence comes back to it.
        for account in (alice, bob):
            yield from self.wait(
                f"{account.username}'s own presence",
                lambda account=account: account.presence_from(account.jid, "AVAILABLE", full=True))

        alice.module("BasePresence").subscribe(bob.jid)
        yield from self.wait("alice's roster push with ask='subscribe'",
                             lambda: alice.push_for(bob.jid, "none", ask="subscribe"))
        yield from self.wait("bob to get alice's subscription request",
                             lambda: bob.presence_from(alice.jid, "SUBSCRIBE"))
        bob.module("BasePresence").subscribed(alice.jid)
        bob.module("BasePresence").subscribe(alice.jid)
        yield from self.wait("alice's roster push with subscription 'to'", lambda: alice.push_for(bob.jid, "to"))
        yield from self.wait("alice to get bob's subscription request",
                             lambda: alice.presence_from(bob.jid, "SUBSCRIBE"))
        yield from self.wait("alice to see bob available", lambda: alice.presence_from(bob.jid, "AVAILABLE", True))
        alice.module("BasePresence").subscribed(bob.jid)
        yield from self.wait("bob to see alice available", lambda: bob.presence_from(alice.jid, "AVAILABLE", True))
        for account, contact in ((alice, bob), (bob, alice)):
            yield from self.wait(f"{account.username}'s roster push with subscription 'both'",
                                 lambda account=account, contact=contact: account.push_for(contact.jid, "both"))
        for account, contact in ((alice, bob), (bob, alice)):
            roster = yield from self.outcome(
                f"{account.username}'s roster, again", self.task(account.module("Roster").request_roster))
            items = [(str(item.jid), item.subscription, item.ask) for item in roster.items or []]
            if items != [(str(contact.jid), "both", None)]:
                raise Failed(f"{account.username}'s roster is {items}, expected {contact.jid} with 'both'")
        self.passed("alice asked, bob approved and asked back, alice approved: both rosters say 'both' "
                    f"(pushes: alice {len(alice.pushes)}, bob {len(bob.pushes)}), each sees the other available")

    def send_chat(self, sender, to, body, oob_url=None):
        """A chat message as Gajim sends one, remembered for the archive
        check."""
        message = Message(to=to, body=body, typ="chat")
        message.setID(secrets.token_hex(8))
        if oob_url is not None:
            message.addChild("x", namespace=Namespace.X_OOB).setTagData("url", oob_url)
        sender.client.send_stanza(message)
        self.exchanged.append((sender.username, body))

    def chat(self):
        self.begin("chat")
        alice, bob = self.alice, self.bob
        body = f"hello bob, from nbxmpp ({self.tag})"
        self.send_chat(alice, bob.jid, body)
        stanza, properties = yield from self.wait("bob to get alice's message", lambda: bob.message_with(body))
        if not properties.type.is_chat or properties.jid != alice.jid_full:
            raise Failed(f"bob got {properties.type} from {properties.jid}: {stanza}")
        if properties.has_server_delay:
            raise Failed(f"a live message carries a delay stamp: {stanza}")
        reply = f"hello alice, from nbxmpp ({self.tag})"
        self.send_chat(bob, properties.jid, reply)
        stanza, properties = yield from self.wait("alice to get bob's reply", lambda: alice.message_with(reply))
        if not properties.type.is_chat or properties.jid != bob.jid_full:
            raise Failed(f"alice got {properties.type} from {properties.jid}: {stanza}")
        self.passed(f"alice to {bob.jid} and back to {alice.jid_full}, live")

    def offline(self):
        self.begin("offline")
        alice, bob = self.alice, self.bob
        gone = bob.jid_full
        bob.close()
        yield from self.wait("bob's stream to close", lambda: bob.signal("disconnected"))
        domain, condition, text = bob.signal("disconnected")
        if domain != StreamError.STREAM or condition != "stream-end":
            raise Failed(f"bob's stream did not end cleanly: {domain}, {condition}, {text}")
        yield from self.wait(
            "alice to see bob unavailable",
            lambda: any(p.jid == gone and p.type.is_unavailable for p in alice.presences))
        body = f"while you were away ({self.tag})"
        sent_at = time.time()
        self.send_chat(alice, bob.jid, body)
        # The server handles a stream's stanzas in order: once it answers the
        # ping, the message is stored, and bob may come back.
        yield from self.outcome("alice's ping", self.task(alice.module("Ping").ping, JID.from_string(self.domain)))
        bob.connect()
        jid = yield from self.connected(bob)
        bob.jid_full = jid
        bob.module("BasePresence").send()
        stanza, properties = yield from self.wait("bob to get the message sent while he was away",
                                                  lambda: bob.message_with(body))
        if not properties.jid.bare_match(alice.jid):
            raise Failed(f"the offline message came from {properties.jid}: {stanza}")
        delay = stanza.getTag("delay", namespace=Namespace.DELAY2)
        if delay is None or not properties.has_server_delay:
            raise Failed(f"no XEP-0203 delay stamp from the server on the offline message: {stanza}")
        if not sent_at - 5 <= properties.timestamp <= time.time() + 5:
            raise Failed(f"the delay stamp {delay.getAttr('stamp')} is not when alice sent it")
        yield from self.wait("alice to see bob available again",
                             lambda: any(p.jid == jid and p.type.is_available for p in alice.presences))
        self.passed(f"bob closed his stream, got alice's message on his return with "
                    f"<delay from='{delay.getAttr('from')}' stamp='{delay.getAttr('stamp')}'/>")

    def upload(self):
        self.begin("upload")
        alice, bob = self.alice, self.bob
        discovery = alice.module("Discovery")
        items = yield from self.outcome(
            f"the disco items of {self.domain}", self.task(discovery.disco_items, self.domain))
        service, limit = None, None
        for item in items.items:
            info = yield from self.outcome(f"the disco info of {item.jid}", self.task(discovery.disco_info, item.jid))
            if info.has_httpupload:
                service, limit = item.jid, info.httpupload_max_file_size
                break
        if service is None:
            raise Failed(f"no upload service among {[str(item.jid) for item in items.items]}")
        if limit is not None and limit < UPLOAD_SIZE:
            raise Failed(f"{service} allows {limit} bytes, less than {UPLOAD_SIZE}")
        data = secrets.token_bytes(UPLOAD_SIZE)
        slot = yield from self.outcome("the upload slot", self.task(
            alice.module("HTTPUpload").request_slot, service, "nbxmpp-upload.bin", UPLOAD_SIZE,
            "application/octet-stream"))
        for url in (slot.put_uri, slot.get_uri):
            if not url.startswith("https://"):
                raise Failed(f"the slot's URL {url} is not https")
        # Without the CA the server's certificate is refused. This comes
        # before any HTTPS connection that succeeds: GLib resumes a TLS 1.3
        # session to the same host without verifying the certificate again,
        # whatever the trust store.
        refused = self.http("GET", slot.get_uri, trust=self.system_trust)
        yield from self.wait("the GET with the system's trust store", lambda: refused.done)
        if refused.error is None:
            raise Failed(f"GET {slot.get_uri} succeeded trusting only the system's store")
        if not refused.tls_errors & Gio.TlsCertificateFlags.UNKNOWN_CA:
            raise Failed(f"GET without the CA failed otherwise: {describe(refused.error)} ({refused.tls_errors})")
        put_status, _body = yield from self.outcome("the PUT", self.http(
            "PUT", slot.put_uri, body=data, content_type="application/octet-stream", headers=slot.headers))
        if put_status not in (200, 201):
            raise Failed(f"PUT {slot.put_uri}: HTTP {put_status}")
        self.send_chat(alice, bob.jid, slot.get_uri, oob_url=slot.get_uri)
        stanza, properties = yield from self.wait("bob to get the link", lambda: bob.message_with(slot.get_uri))
        if properties.oob is None or properties.oob.url != slot.get_uri:
            raise Failed(f"no XEP-0066 oob with the URL in bob's message: {stanza}")
        status, body = yield from self.outcome("the GET", self.http("GET", properties.oob.url))
        if status != 200:
            raise Failed(f"GET {properties.oob.url}: HTTP {status}")
        if body != data:
            raise Failed(f"GET {properties.oob.url} gave {len(body)} bytes that differ from the {len(data)} uploaded")
        self.passed(f"{UPLOAD_SIZE} bytes, {slot.get_uri} (service {service}, PUT answered {put_status}), "
                    "downloaded by bob trusting the CA; refused without it")

    def avatar(self):
        self.begin("avatar")
        alice, bob = self.alice, self.bob
        png = tiny_png()
        sha = hashlib.sha1(png).hexdigest()
        avatar = Avatar()
        avatar.add_image_source(png, "image/png", 12, 12)
        yield from self.outcome("alice's avatar to be published",
                                self.task(alice.module("UserAvatar").set_avatar, avatar))
        metadata = yield from self.outcome(
            "alice's avatar metadata", self.task(bob.module("UserAvatar").request_avatar_metadata, alice.jid))
        if metadata is None or not metadata.infos:
            raise Failed("bob found no avatar metadata for alice")
        info = metadata.infos[0]
        if (info.id, info.bytes, info.type, metadata.default) != (sha, len(png), "image/png", sha):
            raise Failed(f"alice's avatar metadata is {metadata}; expected id and item {sha}, "
                         f"{len(png)} bytes, image/png")
        data = yield from self.outcome(
            "alice's avatar data", self.task(bob.module("UserAvatar").request_avatar_data, sha, alice.jid))
        if data is None or data.data != png or data.sha != sha:
            raise Failed(f"alice's avatar data is {data}")
        self.passed(f"alice published a {len(png)}-byte PNG; bob read metadata and data, SHA-1 {sha}")

    def mam(self):
        self.begin("mam")
        alice, bob = self.alice, self.bob
        query_id = secrets.token_hex(6)
        query = self.task(bob.module("MAM").make_query, bob.jid, queryid=query_id, with_=str(alice.jid))
        fin = yield from self.outcome("bob's archive query", query)
        results = [properties for _stanza, properties in bob.messages
                   if properties.mam is not None and properties.mam.query_id == query_id]
        for properties in results:
            if properties.mam.archive is not None and properties.mam.archive != bob.jid:
                raise Failed(f"a result came from the archive {properties.mam.archive}")
            # For an archived message, nbxmpp's `jid` is the other party.
            if not properties.jid.bare_match(alice.jid):
                raise Failed(f"a result of the query with {alice.jid} is a message with {properties.jid}")
        # The accounts are new, so this is all they said to each other.
        archived = [(properties.from_.localpart, properties.body) for properties in results]
        if archived != self.exchanged:
            raise Failed(f"bob's archive with alice holds {archived}; expected {self.exchanged}")
        stamps = [properties.mam.timestamp for properties in results]
        if stamps != sorted(stamps):
            raise Failed(f"the archive's timestamps are out of order: {stamps}")
        if not fin.complete:
            raise Failed("the query's fin is not complete")
        self.passed(f"bob's archive with alice: the {len(archived)} messages of chat, offline and upload, "
                    f"in order, with their text and sender; fin complete (RSM {fin.rsm.first}..{fin.rsm.last})")

    def close(self):
        self.begin("close")
        for account in (self.alice, self.bob):
            account.close()
        for account in (self.alice, self.bob):
            yield from self.wait(f"{account.username}'s stream to close",
                                 lambda account=account: account.signal("disconnected"))
            domain, condition, text = account.signal("disconnected")
            if domain != StreamError.STREAM or condition != "stream-end":
                raise Failed(f"{account.username}'s stream did not end cleanly: {domain}, {condition}, {text}")
        self.passed("alice and bob closed their streams, and the server closed its side")


def main():
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    run = Run(*sys.argv[1:])
    failure = run.main()
    if failure:
        print(f"FAIL {failure}", flush=True)
        for account in (run.alice, run.bob):
            print("\n".join(account.transcript()), flush=True)
        sys.exit(1)
    print("ok   all nbxmpp client steps passed", flush=True)


if __name__ == "__main__":
    main()
