#!/usr/bin/env python3
"""IM interop check of swiftletd with two third-party XMPP libraries.

A slixmpp client and an aioxmpp client, each with a fresh random account,
play RFC 6121 instant messaging against a running server (loopback only),
twice: first slixmpp is A and aioxmpp is B, then the other way round
(or once, with the library of A named as the last argument).
  1. both register in-band (XEP-0077) over STARTTLS and log in,
  2. A adds B to its roster and asks to subscribe; B accepts and asks
     back; A accepts; both rosters say subscription="both" (RFC 6121 §3),
  3. each sees the other's available presence (RFC 6121 §4),
  4. chat messages both ways keep a non-ASCII body exactly (RFC 6121 §5),
  5. B logs out and A sees B's unavailable presence,
  6. A sends three messages to B while B is offline; B logs in again and
     gets them once each, in order, with an XEP-0203 delay stamp,
  7. A publishes an avatar (XEP-0084 over PEP, XEP-0163); B, whose entity
     capabilities (XEP-0115) ask for the metadata, is notified and fetches
     the image byte for byte.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: im_interop.py HOST PORT DOMAIN CA_CERTIFICATE [slixmpp|aioxmpp]
(CA_CERTIFICATE: the server's local CA root, which both libraries
are told to trust, so TLS is verified for real.)
"""
import asyncio
import datetime
import hashlib
import logging
import secrets
import sys

import aioxmpp
import aioxmpp.avatar
import aioxmpp.connector
import aioxmpp.ibr
import aioxmpp.ping
import cryptography.x509

import slixmpp_account

STEP_TIMEOUT = 20
# Non-ASCII (an accent, an emoji outside the BMP, a no-break space), XML's
# special characters and a tab; no carriage return, which XML parsing turns
# into a line feed on any server.
BODY = "héllo 👋 <&> \"quoted\" 'single' ]]> \u00a0tab\there"
OFFLINE_COUNT = 3


class Peer(slixmpp_account.Records):
    """One client as the scenario sees it, whatever its library: what has
    arrived so far, and a way to wait for more.

    Subclasses fill the records from their library's events and call
    `changed()`; the scenario reads them with `until()`.
    """

    def __init__(self, server, library):
        super().__init__()
        self.server = server
        self.library = library
        self.user = library[:4] + secrets.token_hex(4)
        self.jid = f"{self.user}@{server.domain}"
        self.password = "pw-" + secrets.token_hex(6)
        # The resource each login binds.
        self.resource = "interop"
        # Bare JID -> subscription, as the latest roster push says.
        self.roster = {}
        # Bare JIDs that asked to subscribe to us, in order of arrival.
        self.subscribe_requests = []
        # Bare JID -> "available" or "unavailable", the latest presence.
        self.presence = {}
        # (from bare JID, type, body, delay stamp or None), in order of arrival.
        self.messages = []
        # (from bare JID, [(id, type, bytes)]): avatar metadata notifications.
        self.avatars = []

    def __str__(self):
        return f"{self.library} ({self.jid})"

    def state(self):
        """The records, for a failure message."""
        return (f"{self}: roster={self.roster} subscribe_requests={self.subscribe_requests} "
                f"presence={self.presence} messages={self.messages} avatars={self.avatars}")


class SlixmppPeer(Peer):
    """A peer on slixmpp; a new `ClientXMPP` for each connection."""

    def __init__(self, server):
        super().__init__(server, "slixmpp")
        self.client = None

    def _client(self, jid, register=False):
        plugins = ("xep_0030", "xep_0060", "xep_0084", "xep_0115", "xep_0163", "xep_0199", "xep_0203")
        plugins += ("xep_0077",) if register else ()
        client = slixmpp_account.make_client(jid, self.password, self.server.ca_certificate, plugins)
        # Subscription requests are answered by the scenario, not by
        # slixmpp's roster automation (None: no answer; False would refuse).
        client.auto_authorize = None
        client.auto_subscribe = False
        return client

    async def register(self):
        await slixmpp_account.register(
            self._client(self.jid, register=True), self.server.host, self.server.port, self.user, self.password,
            STEP_TIMEOUT)

    async def login(self):
        client = self._client(f"{self.jid}/{self.resource}")
        started = asyncio.get_running_loop().create_future()

        async def on_start(_event):
            await client.get_roster(timeout=STEP_TIMEOUT)
            client.send_presence()
            started.set_result(None)

        def on_failed_auth(_event):
            if not started.done():
                started.set_exception(RuntimeError("authentication failed"))

        client.add_event_handler("session_start", on_start)
        client.add_event_handler("failed_auth", on_failed_auth)
        client.add_event_handler("roster_update", self._on_roster_update)
        client.add_event_handler("presence_subscribe", self._on_subscribe)
        client.add_event_handler("presence_available", lambda p: self._on_presence(p, "available"))
        client.add_event_handler("presence_unavailable", lambda p: self._on_presence(p, "unavailable"))
        client.add_event_handler("message", self._on_message)
        client.add_event_handler("avatar_metadata_publish", self._on_avatar_metadata)
        self.client = client
        client.connect(host=self.server.host, port=self.server.port)
        await started

    async def logout(self):
        await self.client.disconnect()
        self.client = None

    async def set_roster_item(self, jid, name):
        await self.client.update_roster(jid, name=name, timeout=STEP_TIMEOUT)

    async def send_presence(self, to, kind):
        self.client.send_presence(pto=to, ptype=kind)

    async def send_chat(self, to, body):
        self.client.send_message(mto=to, mbody=body, mtype="chat")

    async def ping(self):
        await self.client.plugin["xep_0199"].ping(jid=self.server.domain, timeout=STEP_TIMEOUT)

    async def publish_avatar(self, image):
        avatars = self.client.plugin["xep_0084"]
        await avatars.publish_avatar(image, timeout=STEP_TIMEOUT)
        await avatars.publish_avatar_metadata(
            items=[{"id": hashlib.sha1(image).hexdigest(), "type": "image/png", "bytes": len(image)}],
            timeout=STEP_TIMEOUT)

    async def fetch_avatar(self, jid, image_id):
        reply = await self.client.plugin["xep_0084"].retrieve_avatar(jid, image_id, timeout=STEP_TIMEOUT)
        return reply["pubsub"]["items"]["item"]["avatar_data"]["value"]

    def _on_avatar_metadata(self, message):
        infos = message["pubsub_event"]["items"]["item"].xml.iter("{urn:xmpp:avatar:metadata}info")
        self.avatars.append((
            message["from"].bare, [(info.get("id"), info.get("type"), int(info.get("bytes"))) for info in infos]))
        self.changed()

    def _on_roster_update(self, iq):
        for jid, item in iq["roster"]["items"].items():
            self.roster[str(jid)] = item["subscription"]
        self.changed()

    def _on_subscribe(self, presence):
        self.subscribe_requests.append(presence["from"].bare)
        self.changed()

    def _on_presence(self, presence, kind):
        if presence["from"].bare != self.jid:
            self.presence[presence["from"].bare] = kind
            self.changed()

    def _on_message(self, message):
        stamp = message["delay"]["stamp"] if message.xml.find("{urn:xmpp:delay}delay") is not None else None
        self.messages.append((message["from"].bare, message["type"], message["body"], stamp))
        self.changed()


class AioxmppPeer(Peer):
    """A peer on aioxmpp; a new `Client` for each connection."""

    def __init__(self, server):
        super().__init__(server, "aioxmpp")
        self.client = None

    def _security_layer(self, password):
        """STARTTLS required, the chain verified against the server's
        certificate and the name by `HostnameVerifier`, then SASL with
        `password` (none: TLS only, as registration needs)."""
        def ssl_context():
            context = aioxmpp.security_layer.default_ssl_context()
            context.load_verify_locations(self.server.ca_certificate)
            return context

        sasl = (aioxmpp.security_layer.PasswordSASLProvider(self._password_once(password)),) if password else ()
        return aioxmpp.security_layer.SecurityLayer(ssl_context, HostnameVerifier, True, sasl)

    @staticmethod
    def _password_once(password):
        """The password for the first SASL attempt, then none (no retries)."""
        async def provider(_jid, attempt):
            return password if attempt == 0 else None
        return provider

    def _peer_override(self):
        return [(self.server.host, self.server.port, aioxmpp.connector.STARTTLSConnector())]

    async def register(self):
        jid = aioxmpp.JID.fromstr(self.jid)
        # No password: TLS but no SASL, as XEP-0077 registration needs.
        _, stream, _ = await aioxmpp.node.connect_xmlstream(
            jid, self._security_layer(None), negotiation_timeout=STEP_TIMEOUT,
            override_peer=self._peer_override())
        try:
            await aioxmpp.ibr.register(stream, aioxmpp.ibr.Query(self.user, self.password), timeout=STEP_TIMEOUT)
        finally:
            stream.close()

    async def login(self):
        client = aioxmpp.Client(
            aioxmpp.JID.fromstr(f"{self.jid}/{self.resource}"), self._security_layer(self.password),
            override_peer=self._peer_override(), max_initial_attempts=1)
        roster = client.summon(aioxmpp.RosterClient)
        roster.on_entry_added.connect(lambda _item: self._on_roster_change(roster))
        roster.on_entry_subscription_state_changed.connect(lambda _item: self._on_roster_change(roster))
        roster.on_subscribe.connect(self._on_subscribe)
        presence = client.summon(aioxmpp.PresenceClient)
        presence.on_available.connect(lambda jid, _stanza: self._on_presence(jid, "available"))
        presence.on_unavailable.connect(lambda jid, _stanza: self._on_presence(jid, "unavailable"))
        messages = client.summon(aioxmpp.dispatcher.SimpleMessageDispatcher)
        messages.register_callback(None, None, self._on_message)
        # Announces urn:xmpp:avatar:metadata+notify in its caps.
        client.summon(aioxmpp.avatar.AvatarService).on_metadata_changed.connect(self._on_avatar_metadata)
        # Sent as the initial presence, after the roster request, as the
        # stream is established.
        client.summon(aioxmpp.PresenceServer).set_presence(aioxmpp.PresenceState(True))

        established = client.on_stream_established.future()
        failed = client.on_failure.future()
        client.start()
        self.client = client
        done, _ = await asyncio.wait({established, failed}, return_when=asyncio.FIRST_COMPLETED)
        if failed in done:
            raise RuntimeError(f"aioxmpp failed to connect: {failed.exception()!r}")
        failed.cancel()

    async def logout(self):
        stopped = self.client.on_stopped.future()
        self.client.stop()
        await stopped
        self.client = None

    async def set_roster_item(self, jid, name):
        await self.client.summon(aioxmpp.RosterClient).set_entry(
            aioxmpp.JID.fromstr(jid), name=name, timeout=STEP_TIMEOUT)

    async def send_presence(self, to, kind):
        stanza_type = {"subscribe": aioxmpp.PresenceType.SUBSCRIBE, "subscribed": aioxmpp.PresenceType.SUBSCRIBED}
        await self.client.send(aioxmpp.Presence(type_=stanza_type[kind], to=aioxmpp.JID.fromstr(to)))

    async def send_chat(self, to, body):
        message = aioxmpp.Message(type_=aioxmpp.MessageType.CHAT, to=aioxmpp.JID.fromstr(to))
        message.body[None] = body
        await self.client.send(message)

    async def ping(self):
        await aioxmpp.ping.ping(self.client, aioxmpp.JID.fromstr(self.server.domain))

    async def publish_avatar(self, image):
        avatar_set = aioxmpp.avatar.AvatarSet()
        avatar_set.add_avatar_image("image/png", image_bytes=image)
        await self.client.summon(aioxmpp.avatar.AvatarService).publish_avatar_set(avatar_set)

    async def fetch_avatar(self, jid, image_id):
        descriptors = await self.client.summon(aioxmpp.avatar.AvatarService).get_avatar_metadata(
            aioxmpp.JID.fromstr(jid))
        return await next(d for d in descriptors if d.id_ == image_id).get_image_bytes()

    def _on_avatar_metadata(self, jid, descriptors):
        self.avatars.append((str(jid.bare()), [(d.id_, d.mime_type, d.nbytes) for d in descriptors]))
        self.changed()

    def _on_roster_change(self, roster):
        self.roster = {str(jid): item.subscription for jid, item in roster.items.items()}
        self.changed()

    def _on_subscribe(self, stanza):
        self.subscribe_requests.append(str(stanza.from_.bare()))
        self.changed()

    def _on_presence(self, full_jid, kind):
        bare = str(full_jid.bare())
        if bare != self.jid:
            self.presence[bare] = kind
            self.changed()

    def _on_message(self, message):
        stamp = message.xep0203_delay[0].stamp if message.xep0203_delay else None
        body = message.body.any() if message.body else None
        self.messages.append((str(message.from_.bare()), message.type_.value, body, stamp))
        self.changed()


class HostnameVerifier(aioxmpp.security_layer.PKIXCertificateVerifier):
    """aioxmpp's PKIX verifier (OpenSSL checks the chain against the trusted
    certificate) with the leaf's name checked against its DNS SANs here.

    COMPAT: aioxmpp 0.13.3 reads the SAN with `X509.get_extension`, which
    pyOpenSSL 24.3 removed, so its own check raises on any pyOpenSSL that
    installs next to current `cryptography`. Exact names only, no wildcards:
    the server's certificate names its domain.
    """

    def verify_callback(self, conn, x509, errno, errdepth, returncode):
        if not returncode or errdepth > 0:
            return returncode
        hostname = self.transport.get_extra_info("server_hostname")
        try:
            names = x509.to_cryptography().extensions.get_extension_for_class(
                cryptography.x509.SubjectAlternativeName).value.get_values_for_type(cryptography.x509.DNSName)
        except cryptography.x509.ExtensionNotFound:
            return False
        return hostname in names


class Server:
    """Where to connect and what to trust."""

    def __init__(self, host, port, domain, ca_certificate):
        self.host, self.port, self.domain, self.ca_certificate = host, port, domain, ca_certificate


async def step(name, action, peers):
    """Runs `action` (a coroutine) within the step deadline and prints one
    line, with what `action` returns as detail; on an exception or a
    timeout prints the peers' records and exits 1."""
    try:
        detail = await asyncio.wait_for(action, STEP_TIMEOUT)
    except Exception as error:  # any failure of the step, timeouts included
        reason = f"no result within {STEP_TIMEOUT} s" if isinstance(error, asyncio.TimeoutError) else repr(error)
        print(f"FAIL {name}: {reason}")
        for peer in peers:
            print(f"     {peer.state()}")
        sys.exit(1)
    print(f"ok   {name}{': ' + detail if isinstance(detail, str) else ''}")


def require(condition, what):
    """Raises `AssertionError(what)` unless `condition` holds, inside a step."""
    if not condition:
        raise AssertionError(what)


def fresh_stamp(stamp):
    """Whether an XEP-0203 stamp is present, timezone-aware and within a
    minute of now (the messages were stored a moment ago)."""
    if stamp is None or stamp.tzinfo is None:
        return False
    return abs(datetime.datetime.now(datetime.timezone.utc) - stamp) < datetime.timedelta(minutes=1)


async def scenario(a, b):
    """A adds B, they subscribe both ways, chat, and B gets offline messages."""
    tag = f"[A={a.library} B={b.library}]"
    peers = (a, b)

    async def register():
        await asyncio.gather(a.register(), b.register())
        return f"A={a}, B={b}"

    await step(f"{tag} both register in-band", register(), peers)
    await step(f"{tag} both log in, get the roster, send initial presence",
               asyncio.gather(a.login(), b.login()), peers)

    async def add_contact():
        await a.set_roster_item(b.jid, "B")
        await a.until(lambda: b.jid in a.roster)
        require(a.roster[b.jid] == "none", f"A's new item is {a.roster[b.jid]}, not none")
        await a.send_presence(b.jid, "subscribe")
        await b.until(lambda: a.jid in b.subscribe_requests)

    await step(f"{tag} A adds B (roster set + subscribe); B gets the request", add_contact(), peers)

    async def accept_and_ask_back():
        await b.send_presence(a.jid, "subscribed")
        await b.send_presence(a.jid, "subscribe")
        await a.until(lambda: b.jid in a.subscribe_requests and a.roster.get(b.jid) == "to")

    await step(f"{tag} B accepts and asks back; A gets the request, A's item says to",
               accept_and_ask_back(), peers)

    async def accept():
        await a.send_presence(b.jid, "subscribed")
        await a.until(lambda: a.roster.get(b.jid) == "both")
        await b.until(lambda: b.roster.get(a.jid) == "both")
        return f"A={a.roster}, B={b.roster}"

    await step(f"{tag} A accepts; both rosters say both", accept(), peers)

    async def see_each_other():
        await a.until(lambda: a.presence.get(b.jid) == "available")
        await b.until(lambda: b.presence.get(a.jid) == "available")

    await step(f"{tag} each sees the other's available presence", see_each_other(), peers)

    async def chat(sender, recipient, body):
        await sender.send_chat(recipient.jid, body)
        await recipient.until(lambda: any(m[0] == sender.jid for m in recipient.messages))
        received = [m for m in recipient.messages if m[0] == sender.jid]
        require(received == [(sender.jid, "chat", body, None)], f"received {received!r}, sent {body!r}")
        return repr(body)

    await step(f"{tag} A -> B chat keeps the body exactly", chat(a, b, BODY + " (A)"), peers)
    await step(f"{tag} B -> A chat keeps the body exactly", chat(b, a, BODY + " (B)"), peers)

    async def go_offline():
        await b.logout()
        await a.until(lambda: a.presence.get(b.jid) == "unavailable")

    await step(f"{tag} B logs out; A gets B's unavailable presence", go_offline(), peers)

    bodies = [f"offline {n}/{OFFLINE_COUNT} {BODY}" for n in range(1, OFFLINE_COUNT + 1)]

    async def send_offline():
        for body in bodies:
            await a.send_chat(b.jid, body)
        # The server stores each before handling A's next stanza: once the
        # ping is answered, all are stored.
        await a.ping()

    await step(f"{tag} A sends {OFFLINE_COUNT} messages to offline B, then a ping", send_offline(), peers)

    async def receive_offline():
        b.messages.clear()
        await b.login()
        await b.until(lambda: len(b.messages) >= OFFLINE_COUNT)
        # A round trip after the last one: a duplicate would be here by now.
        await b.ping()
        require([m[2] for m in b.messages] == bodies, f"got {[m[2] for m in b.messages]!r}, sent {bodies!r}")
        require(all(m[0] == a.jid and m[1] == "chat" for m in b.messages), f"from/type: {b.messages!r}")
        require(all(fresh_stamp(m[3]) for m in b.messages), f"delay stamps: {[m[3] for m in b.messages]!r}")
        return "stamps " + ", ".join(m[3].isoformat() for m in b.messages)

    await step(f"{tag} B logs in again; gets the {OFFLINE_COUNT} once each, in order, delay-stamped",
               receive_offline(), peers)
    await step(f"{tag} A sees B available again",
               a.until(lambda: a.presence.get(b.jid) == "available"), peers)

    image = b"\x89PNG\r\n\x1a\n" + secrets.token_bytes(2000)
    image_id = hashlib.sha1(image).hexdigest()

    async def share_avatar():
        await a.publish_avatar(image)
        await b.until(lambda: any(m[0] == a.jid for m in b.avatars))
        infos = next(m[1] for m in b.avatars if m[0] == a.jid)
        require(infos == [(image_id, "image/png", len(image))], f"B got the metadata {infos!r}")
        data = await b.fetch_avatar(a.jid, image_id)
        require(data == image, f"B fetched {len(data)} bytes, not the {len(image)} published")
        return f"{len(image)} bytes, id {image_id}"

    await step(f"{tag} A publishes an avatar (XEP-0084, PEP); B (caps with +notify) gets it and fetches the image",
               share_avatar(), peers)
    await step(f"{tag} both log out", asyncio.gather(a.logout(), b.logout()), peers)


PEERS = {"slixmpp": SlixmppPeer, "aioxmpp": AioxmppPeer}


async def main():
    host, port, domain, ca_certificate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    server = Server(host, port, domain, ca_certificate)
    a_libraries = sys.argv[5:6] or list(PEERS)
    for a_library in a_libraries:
        b_library = next(name for name in PEERS if name != a_library)
        await scenario(PEERS[a_library](server), PEERS[b_library](server))
    print(f"ok   all IM interop steps passed with A={'/'.join(a_libraries)}")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
