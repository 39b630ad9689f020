#!/usr/bin/env python3
"""Interop check of swiftletd's XMPP extensions with slixmpp's plugins.

Every scenario uses fresh random accounts, registered in-band (XEP-0077)
over STARTTLS, against a running server (loopback only):
  carbons     XEP-0280: alice on two resources (priorities 10 and 0) with
              carbons on; bob's message to alice's bare JID reaches the
              first and a <received/> carbon the second; what the first
              sends to bob reaches the second as a <sent/> carbon; every
              carbon comes from alice's bare JID; messages marked
              <private/> are not copied, either way.
  vcard       XEP-0054 and XEP-0153: alice stores a vCard (FN, NICKNAME),
              then an avatar of about 200 KB (one large stanza each way);
              bob fetches it and gets the same fields and bytes; alice's
              presence reaches bob with the SHA-1 of the photo.
  blocking    XEP-0191: alice blocks bob; bob's message gets
              service-unavailable, alice's to bob not-acceptable with
              <blocked/>, alice's list holds bob, bob sees alice go
              unavailable; after unblocking bob sees her again and
              messages pass both ways.
  resumption  XEP-0198: carol enables stream management and gets
              <enabled resume='true'/> with an id; her TCP connection is
              cut with no closing of the stream while dave sends her three
              messages; she connects again, slixmpp resumes the session
              (session_resumed, no new session_start), the server's count of
              her stanzas is right, and she has every message once, the one
              from before the cut included; still bound to the same full
              JID, she can send.
  info        XEP-0092, XEP-0202, XEP-0012 queries: the server's version,
              time and uptime; a client's version through the server; a
              contact's last activity while online.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: extensions_interop.py HOST PORT DOMAIN CA_CERTIFICATE [SCENARIO...]
(CA_CERTIFICATE: the server's local CA root, which slixmpp is
told to trust, so TLS is verified for real. No SCENARIO: all of them.)
"""
import asyncio
import datetime
import hashlib
import logging
import re
import secrets
import sys

import slixmpp
from slixmpp.exceptions import IqError

import slixmpp_account

STEP_TIMEOUT = 20
CARBONS = "urn:xmpp:carbons:2"
# Larger than the server's 64 KiB read buffer, so the stanza arrives in
# many reads; smaller than its default max_stanza_size (1 MiB) in base64.
AVATAR_SIZE = 200 * 1024
RESUMED_COUNT = 3


class Server:
    """Where to connect and what to trust."""

    def __init__(self, host, port, domain, ca_certificate):
        self.host, self.port, self.domain, self.ca_certificate = host, port, domain, ca_certificate


class Account:
    """A fresh random account on the server."""

    def __init__(self, server, name):
        self.server = server
        self.name = name
        self.user = name + secrets.token_hex(4)
        self.jid = f"{self.user}@{server.domain}"
        self.password = "pw-" + secrets.token_hex(6)

    async def register(self):
        """Registers in-band (XEP-0077) on a connection of its own."""
        client = slixmpp.ClientXMPP(self.jid, self.password)
        client.enable_direct_tls = False
        client.ca_certs = self.server.ca_certificate
        client.register_plugin("xep_0077")
        client.plugin["xep_0077"].force_registration = True
        outcome = asyncio.get_running_loop().create_future()

        async def on_register(_event):
            iq = client.Iq()
            iq["type"] = "set"
            iq["register"]["username"] = self.user
            iq["register"]["password"] = self.password
            try:
                await iq.send(timeout=STEP_TIMEOUT)
                outcome.set_result(None)
            except IqError as error:
                outcome.set_exception(RuntimeError(f"registration refused: {error.iq['error']['condition']}"))

        client.add_event_handler("register", on_register)
        client.connect(host=self.server.host, port=self.server.port)
        try:
            await outcome
        finally:
            await client.disconnect()


class Connection(slixmpp_account.Records):
    """One slixmpp client logged in as one resource of an account, and what
    it has received so far.

    Handlers append to the records and call `changed()`; steps wait with
    `until()` and read them.
    """

    def __init__(self, account, resource, plugins=(), priority=None):
        super().__init__()
        self.account = account
        self.full_jid = f"{account.jid}/{resource}"
        self.priority = priority
        server = account.server
        client = slixmpp.ClientXMPP(self.full_jid, account.password)
        client.enable_direct_tls = False
        client.ca_certs = server.ca_certificate
        for plugin in ("xep_0030", "xep_0199") + tuple(plugins):
            client.register_plugin(plugin)
        self.client = client
        # (from, type, body, stanza) of every message with a body that is
        # not an error, in order of arrival.
        self.messages = []
        # (from, condition, stanza) of every message error.
        self.errors = []
        # ("sent" or "received", wrapper, forwarded message or None) of
        # every carbon.
        self.carbons = []
        # Bare JID -> "available" or "unavailable", the latest presence.
        self.presence = {}
        # Bare JID -> the latest XEP-0153 photo hash in its presence.
        self.photo_hashes = {}
        # Events of the connection's life, by name, in order.
        self.events = []
        client.add_event_handler("message", self._on_message)
        client.add_event_handler("message_error", self._on_message_error)
        client.add_event_handler("carbon_received", lambda m: self._on_carbon("received", m))
        client.add_event_handler("carbon_sent", lambda m: self._on_carbon("sent", m))
        client.add_event_handler("presence_available", lambda p: self._on_presence(p, "available"))
        client.add_event_handler("presence_unavailable", lambda p: self._on_presence(p, "unavailable"))
        client.add_event_handler("vcard_avatar_update", self._on_avatar)
        for event in ("session_start", "failed_auth", "disconnected", "sm_enabled", "sm_failed", "session_resumed",
                      "stanza_acked", "blocked", "unblocked", "roster_update"):
            client.add_event_handler(event, lambda payload, event=event: self._on_event(event, payload))

    def __str__(self):
        return self.full_jid

    @property
    def plugin(self):
        return self.client.plugin

    def state(self):
        """The records, for a failure message."""
        carbons = [(kind, str(wrapper["from"]), str(inner["from"]), inner["body"]) if inner is not None
                   else (kind, str(wrapper)) for kind, wrapper, inner in self.carbons]
        return (f"{self}: messages={[m[:3] for m in self.messages]} errors={[e[:2] for e in self.errors]} "
                f"carbons={carbons} presence={self.presence} events={[e for e, _ in self.events]}")

    def event_count(self, name):
        return sum(1 for event, _ in self.events if event == name)

    async def start(self):
        """Connects, logs in, binds, gets the roster and sends initial
        presence (with the priority, if any)."""
        self.connect()
        await self.until(lambda: self.event_count("session_start") or self.event_count("failed_auth")
                         or self.event_count("disconnected"))
        require(self.event_count("session_start"), f"{self}: no session: {[e for e, _ in self.events]}")
        await self.client.get_roster(timeout=STEP_TIMEOUT)
        self.client.send_presence(ppriority=self.priority)

    def connect(self):
        """Starts connecting; slixmpp's events say how it goes."""
        self.client.connect(host=self.account.server.host, port=self.account.server.port)

    async def stop(self):
        await self.client.disconnect()

    async def ping(self):
        """A round trip to the server: what it sent us before answering has
        arrived when this returns."""
        await self.plugin["xep_0199"].ping(jid=self.account.server.domain, timeout=STEP_TIMEOUT)

    def send_chat(self, to, body, private=False):
        message = self.client.make_message(mto=to, mbody=body, mtype="chat")
        if private:
            message.enable("carbon_private")
        message.send()

    def _on_message(self, message):
        if message["type"] != "error":
            self.messages.append((str(message["from"]), message["type"], message["body"], message))
            self.changed()

    def _on_message_error(self, message):
        self.errors.append((str(message["from"]), message["error"]["condition"], message))
        self.changed()

    def _on_carbon(self, kind, wrapper):
        # The forwarded message, or "" when there is none.
        inner = wrapper[f"carbon_{kind}"]
        self.carbons.append((kind, wrapper, inner if isinstance(inner, slixmpp.Message) else None))
        self.changed()

    def _on_presence(self, presence, kind):
        bare = presence["from"].bare
        if bare != self.account.jid:
            self.presence[bare] = kind
            self.changed()

    def _on_avatar(self, presence):
        self.photo_hashes[presence["from"].bare] = presence["vcard_temp_update"]["photo"]
        self.changed()

    def _on_event(self, name, payload):
        self.events.append((name, payload))
        self.changed()


class Failure(Exception):
    """A step's check did not hold."""


def require(condition, what):
    """Raises `Failure(what)` unless `condition` holds, inside a step."""
    if not condition:
        raise Failure(what)


async def step(name, action, connections):
    """Runs `action` (a coroutine) within the step deadline and prints one
    line, with what `action` returns as detail; on an exception or a
    timeout prints the connections' records and exits 1."""
    try:
        detail = await asyncio.wait_for(action, STEP_TIMEOUT)
    except Exception as error:  # any failure of the step, timeouts included
        reason = f"no result within {STEP_TIMEOUT} s" if isinstance(error, asyncio.TimeoutError) else repr(error)
        print(f"FAIL {name}: {reason}", flush=True)
        for connection in connections:
            print(f"     {connection.state()}", flush=True)
        sys.exit(1)
    print(f"ok   {name}{': ' + detail if isinstance(detail, str) else ''}", flush=True)


async def register(*accounts):
    """Registers `accounts`, at once."""
    await asyncio.gather(*(account.register() for account in accounts))
    return ", ".join(account.jid for account in accounts)


async def subscribe_both(a, b):
    """`a` and `b` subscribe to each other's presence (slixmpp's roster
    automation accepts and asks back) and see each other available."""
    a.client.send_presence(pto=b.account.jid, ptype="subscribe")
    # RFC 6121 §3.1.5-3.1.6 do not order the roster push that says "both"
    # before the contact's presence (which slixmpp's approval also sends
    # directly), so each side waits for both.
    for one, other in ((a, b), (b, a)):
        await one.until(lambda: one.presence.get(other.account.jid) == "available"
                        and one.client.client_roster[other.account.jid]["subscription"] == "both")


# MARK: - XEP-0280 carbons


async def carbons(server):
    alice, bob = Account(server, "alice"), Account(server, "bob")
    await step("[carbons] alice and bob register in-band", register(alice, bob), ())
    alice1 = Connection(alice, "one", ["xep_0280"], priority=10)
    alice2 = Connection(alice, "two", ["xep_0280"], priority=0)
    bob1 = Connection(bob, "phone")
    everyone = (alice1, alice2, bob1)

    async def log_in():
        await asyncio.gather(*(c.start() for c in everyone))
        await asyncio.gather(*(c.plugin["xep_0280"].enable(timeout=STEP_TIMEOUT) for c in (alice1, alice2)))
        return "priorities 10 and 0"

    await step("[carbons] alice logs in twice and enables carbons on both, bob logs in", log_in(), everyone)

    def check_wrapper(kind, wrapper, owner):
        require(wrapper["from"] == alice.jid, f"<{kind}/> carbon from {wrapper['from']}, not {alice.jid}")
        require(wrapper["to"] == owner.full_jid, f"<{kind}/> carbon to {wrapper['to']}, not {owner.full_jid}")
        require(wrapper["type"] == "chat", f"<{kind}/> carbon of type {wrapper['type']}")

    async def received():
        bob1.send_chat(alice.jid, "to alice's bare JID")
        await alice1.until(lambda: alice1.messages)
        await alice2.until(lambda: alice2.carbons)
        await asyncio.gather(alice1.ping(), alice2.ping())
        require([m[:3] for m in alice1.messages] == [(bob1.full_jid, "chat", "to alice's bare JID")],
                f"priority 10 got {[m[:3] for m in alice1.messages]}")
        require(not alice1.carbons, f"priority 10 got carbons too: {alice1.state()}")
        require(not alice2.messages, f"priority 0 got the message itself: {alice2.state()}")
        require(len(alice2.carbons) == 1, f"priority 0 got {len(alice2.carbons)} carbons")
        kind, wrapper, inner = alice2.carbons[0]
        require(kind == "received", f"a <{kind}/> carbon")
        check_wrapper(kind, wrapper, alice2)
        require(inner is not None, f"no forwarded message in {wrapper}")
        require((inner["from"], inner["to"], inner["body"]) == (bob1.full_jid, alice.jid, "to alice's bare JID"),
                f"forwarded {inner}")
        return f"carbon from {wrapper['from']}"

    await step("[carbons] bob -> alice: priority 10 gets it, priority 0 a <received/> carbon from alice's bare JID",
               received(), everyone)

    async def sent():
        alice1.send_chat(bob1.full_jid, "from alice/one")
        await bob1.until(lambda: bob1.messages)
        await alice2.until(lambda: len(alice2.carbons) == 2)
        await asyncio.gather(alice1.ping(), alice2.ping())
        require([m[:3] for m in bob1.messages] == [(alice1.full_jid, "chat", "from alice/one")],
                f"bob got {[m[:3] for m in bob1.messages]}")
        require(not alice1.carbons, f"the sender got a carbon of its own message: {alice1.state()}")
        kind, wrapper, inner = alice2.carbons[1]
        require(kind == "sent", f"a <{kind}/> carbon")
        check_wrapper(kind, wrapper, alice2)
        require(inner is not None, f"no forwarded message in {wrapper}")
        require((inner["from"], inner["to"], inner["body"]) == (alice1.full_jid, bob1.full_jid, "from alice/one"),
                f"forwarded {inner}")
        return f"carbon from {wrapper['from']}"

    await step("[carbons] alice/one -> bob: alice/two gets a <sent/> carbon from alice's bare JID", sent(), everyone)

    async def private():
        alice1.send_chat(bob1.full_jid, "private, sent", private=True)
        bob1.send_chat(alice.jid, "private, received", private=True)
        await bob1.until(lambda: len(bob1.messages) == 2)
        await alice1.until(lambda: len(alice1.messages) == 2)
        await asyncio.gather(alice1.ping(), alice2.ping(), bob1.ping())
        require(len(alice2.carbons) == 2 and not alice2.messages, f"alice/two: {alice2.state()}")
        require(len(alice1.carbons) == 0, f"alice/one: {alice1.state()}")
        require(bob1.messages[1][2] == "private, sent" and alice1.messages[1][2] == "private, received",
                f"bodies: {bob1.messages[1][2]!r}, {alice1.messages[1][2]!r}")
        kept = [c for c in (bob1, alice1) if c.messages[1][3].xml.find(f"{{{CARBONS}}}private") is not None]
        require(not kept, f"<private/> reached {[str(c) for c in kept]} (XEP-0280 §9: the server should remove it)")

    await step("[carbons] messages with <private/> both ways are delivered, not copied, and lose <private/>",
               private(), everyone)

    async def disable():
        await alice2.plugin["xep_0280"].disable(timeout=STEP_TIMEOUT)
        bob1.send_chat(alice.jid, "after disabling")
        alice1.send_chat(bob1.full_jid, "after disabling")
        await alice1.until(lambda: len(alice1.messages) == 3)
        await bob1.until(lambda: len(bob1.messages) == 3)
        await alice2.ping()
        require(len(alice2.carbons) == 2, f"alice/two: {alice2.state()}")

    await step("[carbons] alice/two disables carbons and gets no more copies", disable(), everyone)
    await step("[carbons] all log out", asyncio.gather(*(c.stop() for c in everyone)), everyone)


# MARK: - XEP-0054 vcard-temp, XEP-0153 avatars


def avatar_bytes():
    """A PNG signature and IHDR chunk, then random bytes: AVATAR_SIZE in all."""
    header = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000400000004008060000")
    return header + secrets.token_bytes(AVATAR_SIZE - len(header))


async def vcard(server):
    alice, bob = Account(server, "alice"), Account(server, "bob")
    await step("[vcard] alice and bob register in-band", register(alice, bob), ())
    alice1 = Connection(alice, "desk", ["xep_0054", "xep_0153"])
    bob1 = Connection(bob, "phone", ["xep_0054", "xep_0153"])
    both = (alice1, bob1)
    photo = avatar_bytes()
    photo_hash = hashlib.sha1(photo).hexdigest()

    async def log_in():
        await asyncio.gather(alice1.start(), bob1.start())
        await subscribe_both(alice1, bob1)

    await step("[vcard] alice and bob log in and subscribe to each other", log_in(), both)

    async def publish():
        card = alice1.plugin["xep_0054"].make_vcard()
        card["FN"] = "Alice Liddell"
        card["NICKNAME"] = "alice ✨"
        await alice1.plugin["xep_0054"].publish_vcard(card, timeout=STEP_TIMEOUT)

    await step("[vcard] alice stores a vCard with FN and NICKNAME", publish(), both)

    async def set_avatar():
        # xep_0153 fetches the stored vCard, adds the PHOTO, stores it
        # again and sends presence with the new hash.
        await alice1.plugin["xep_0153"].set_avatar(avatar=photo, mtype="image/png", timeout=STEP_TIMEOUT)
        return f"{len(photo)} bytes, sha1 {photo_hash}"

    await step("[vcard] alice adds a PHOTO through XEP-0153 (vCard read back, stored again)", set_avatar(), both)

    async def fetch():
        result = await bob1.plugin["xep_0054"].get_vcard(alice.jid, cached=False, timeout=STEP_TIMEOUT)
        card = result["vcard_temp"]
        require(result["from"] == alice.jid, f"the answer came from {result['from']}")
        require(card["FN"] == "Alice Liddell", f"FN {card['FN']!r}")
        # slixmpp reads NICKNAME as a list, its content split at commas.
        require(card["NICKNAME"] == ["alice ✨"], f"NICKNAME {card['NICKNAME']!r}")
        require(card["PHOTO"]["TYPE"] == "image/png", f"TYPE {card['PHOTO']['TYPE']!r}")
        got = card["PHOTO"]["BINVAL"]
        require(got == photo, f"BINVAL of {len(got or b'')} bytes differs from the {len(photo)} stored")
        return f"{len(str(result))} bytes of XML"

    await step("[vcard] bob fetches alice's vCard: FN, NICKNAME and the photo's bytes match", fetch(), both)

    async def avatar_hash():
        await bob1.until(lambda: bob1.photo_hashes.get(alice.jid) == photo_hash)
        return photo_hash

    await step("[vcard] alice's presence reaches bob with the photo's SHA-1 (XEP-0153)", avatar_hash(), both)
    await step("[vcard] both log out", asyncio.gather(alice1.stop(), bob1.stop()), both)


# MARK: - XEP-0191 blocking


async def blocking(server):
    alice, bob = Account(server, "alice"), Account(server, "bob")
    await step("[blocking] alice and bob register in-band", register(alice, bob), ())
    alice1 = Connection(alice, "desk", ["xep_0191"])
    bob1 = Connection(bob, "phone")
    both = (alice1, bob1)

    async def log_in():
        await asyncio.gather(alice1.start(), bob1.start())
        await subscribe_both(alice1, bob1)
        blocked = await alice1.plugin["xep_0191"].get_blocked_jids(timeout=STEP_TIMEOUT)
        require(blocked == set(), f"a new account's blocklist: {blocked}")

    await step("[blocking] alice and bob log in and subscribe; alice's blocklist is empty", log_in(), both)

    async def block():
        pushes = alice1.event_count("blocked")
        await alice1.plugin["xep_0191"].block(bob.jid, timeout=STEP_TIMEOUT)
        await alice1.until(lambda: alice1.event_count("blocked") > pushes)
        await bob1.until(lambda: bob1.presence.get(alice.jid) == "unavailable")
        blocked = await alice1.plugin["xep_0191"].get_blocked_jids(timeout=STEP_TIMEOUT)
        require({str(jid) for jid in blocked} == {bob.jid}, f"alice's blocklist: {blocked}")

    await step("[blocking] alice blocks bob: a push, the list holds bob, bob sees alice unavailable", block(), both)

    async def refused():
        bob1.send_chat(alice.jid, "blocked?")
        await bob1.until(lambda: bob1.errors)
        sender, condition, _ = bob1.errors[0]
        require((sender, condition) == (alice.jid, "service-unavailable"), f"bob got {condition} from {sender}")
        alice1.send_chat(bob.jid, "to someone I block")
        await alice1.until(lambda: alice1.errors)
        sender, condition, stanza = alice1.errors[0]
        require(condition == "not-acceptable", f"alice got {condition}")
        blocked = stanza.xml.find("{jabber:client}error/{urn:xmpp:blocking:errors}blocked")
        require(blocked is not None, f"no <blocked/> in {stanza}")
        await asyncio.gather(alice1.ping(), bob1.ping())
        require(not alice1.messages and not bob1.messages, "a message passed the block")
        return f"bob: {bob1.errors[0][1]}, alice: {condition} + <blocked/>"

    await step("[blocking] bob -> alice is service-unavailable, alice -> bob not-acceptable with <blocked/>",
               refused(), both)

    async def unblock():
        await alice1.plugin["xep_0191"].unblock(bob.jid, timeout=STEP_TIMEOUT)
        await alice1.until(lambda: alice1.event_count("unblocked"))
        await bob1.until(lambda: bob1.presence.get(alice.jid) == "available")
        blocked = await alice1.plugin["xep_0191"].get_blocked_jids(timeout=STEP_TIMEOUT)
        require(blocked == set(), f"alice's blocklist: {blocked}")
        bob1.send_chat(alice.jid, "unblocked")
        alice1.send_chat(bob.jid, "welcome back")
        await alice1.until(lambda: alice1.messages)
        await bob1.until(lambda: bob1.messages)
        require(alice1.messages[0][2] == "unblocked" and bob1.messages[0][2] == "welcome back",
                f"got {alice1.messages[0][2]!r} and {bob1.messages[0][2]!r}")

    await step("[blocking] alice unblocks bob: a push, bob sees her available, messages pass both ways",
               unblock(), both)
    await step("[blocking] both log out", asyncio.gather(alice1.stop(), bob1.stop()), both)


# MARK: - XEP-0198 stream resumption


async def resumption(server):
    carol, dave = Account(server, "carol"), Account(server, "dave")
    await step("[resumption] carol and dave register in-band", register(carol, dave), ())
    carol1 = Connection(carol, "laptop", ["xep_0198"])
    dave1 = Connection(dave, "phone")
    both = (carol1, dave1)

    async def log_in():
        await asyncio.gather(carol1.start(), dave1.start())
        await carol1.until(lambda: carol1.event_count("sm_enabled") or carol1.event_count("sm_failed"))
        require(carol1.event_count("sm_enabled"), "the server refused to enable stream management")
        enabled = next(payload for event, payload in carol1.events if event == "sm_enabled")
        require(enabled["resume"] is True and enabled["id"], f"<enabled/> without resumption: {enabled}")
        require(int(enabled["max"] or 0) > 0, f"max {enabled['max']!r}")
        return str(enabled)

    await step("[resumption] carol enables stream management: <enabled resume='true' id=…/>", log_in(), both)

    async def before():
        dave1.send_chat(carol1.full_jid, "before the cut")
        await carol1.until(lambda: carol1.messages)

    await step("[resumption] dave -> carol before the cut", before(), both)

    bodies = [f"while cut {n}/{RESUMED_COUNT}" for n in range(1, RESUMED_COUNT + 1)]

    # What carol sent under stream management before the cut: all of it
    # answered, so the server's <resumed h=…/> must count it all.
    sent = {}

    async def cut():
        sent["count"] = carol1.plugin["xep_0198"].seq
        # No </stream:stream>, no TLS close_notify: the socket is closed
        # under slixmpp, as when a phone loses its network.
        carol1.client.transport.abort()
        await carol1.until(lambda: carol1.event_count("disconnected"))
        for body in bodies:
            dave1.send_chat(carol.jid, body)
        # Routed (to carol's session, waiting for her) before the answer.
        await dave1.ping()

    await step(f"[resumption] carol's connection is cut; dave sends her {RESUMED_COUNT} messages", cut(), both)

    async def resume():
        carol1.connect()
        await carol1.until(lambda: carol1.event_count("session_resumed") or carol1.event_count("sm_failed"))
        require(carol1.event_count("session_resumed") == 1, "stream management failed to resume")
        require(carol1.event_count("session_start") == 1, "a new session started instead")
        resumed = next(payload for event, payload in carol1.events if event == "session_resumed")
        require(int(resumed["h"]) == sent["count"], f"{resumed} after carol sent {sent['count']} stanzas")
        await carol1.until(lambda: len(carol1.messages) >= 1 + RESUMED_COUNT)
        await carol1.ping()
        got = [m[2] for m in carol1.messages]
        require(got == ["before the cut"] + bodies, f"carol has {got}")
        require(all(m[0] == dave1.full_jid for m in carol1.messages), f"from {[m[0] for m in carol1.messages]}")
        require(str(carol1.client.boundjid) == carol1.full_jid, f"bound to {carol1.client.boundjid}")
        return f"{resumed}; carol has {got}"

    await step("[resumption] carol connects again and slixmpp resumes; she has each message once, in order",
               resume(), both)

    async def send_after():
        carol1.send_chat(dave1.full_jid, "back again")
        await dave1.until(lambda: dave1.messages)
        require(dave1.messages[0][:3] == (carol1.full_jid, "chat", "back again"), f"dave got {dave1.messages[0][:3]}")
        # Every stanza carol sent has been answered; the server's <a h=…/>
        # must count them all, on from <resumed h=…/>.
        management = carol1.plugin["xep_0198"]
        await carol1.ping()
        management.request_ack()
        await carol1.until(lambda: management.last_ack == management.seq)
        return f"<a h='{management.last_ack}'/>"

    await step("[resumption] carol's message after resuming reaches dave; the server acknowledges all she sent",
               send_after(), both)
    await step("[resumption] both log out", asyncio.gather(carol1.stop(), dave1.stop()), both)


# MARK: - XEP-0092, XEP-0202, XEP-0012


async def info(server):
    alice, bob = Account(server, "alice"), Account(server, "bob")
    await step("[info] alice and bob register in-band", register(alice, bob), ())
    alice1 = Connection(alice, "desk", ["xep_0092", "xep_0202", "xep_0012"])
    bob1 = Connection(bob, "phone", ["xep_0092"])
    both = (alice1, bob1)

    async def log_in():
        await asyncio.gather(alice1.start(), bob1.start())
        await subscribe_both(alice1, bob1)

    await step("[info] alice and bob log in and subscribe to each other", log_in(), both)

    async def version():
        result = await alice1.plugin["xep_0092"].get_version(server.domain, timeout=STEP_TIMEOUT)
        name, number = result["software_version"]["name"], result["software_version"]["version"]
        require(name == "Swiftlet" and number, f"name {name!r}, version {number!r}")
        return f"{name} {number} on {result['software_version']['os']}"

    await step("[info] the server's software version (XEP-0092)", version(), both)

    async def client_version():
        result = await alice1.plugin["xep_0092"].get_version(bob1.full_jid, timeout=STEP_TIMEOUT)
        name = result["software_version"]["name"]
        require(result["from"] == bob1.full_jid and name, f"from {result['from']}, name {name!r}")
        return f"{name} {result['software_version']['version']}"

    await step("[info] bob's client's version, through the server to his full JID", client_version(), both)

    async def entity_time():
        result = await alice1.plugin["xep_0202"].get_entity_time(server.domain, timeout=STEP_TIMEOUT)
        # COMPAT: slixmpp 1.17's `result["entity_time"]["utc"]` appends a
        # "Z" to the text and fails to parse XEP-0202 §3's own example
        # (`<utc>2006-12-19T17:58:35Z</utc>`, which Prosody sends too), so
        # the text is read and parsed here.
        text = result["entity_time"].xml.findtext("{urn:xmpp:time}utc")
        tzo = result["entity_time"].xml.findtext("{urn:xmpp:time}tzo")
        require(text and text.endswith("Z"), f"utc {text!r} is not UTC in XEP-0082 form")
        require(re.fullmatch(r"[+-]\d\d:\d\d", tzo or ""), f"tzo {tzo!r}")
        utc = datetime.datetime.fromisoformat(text)
        now = datetime.datetime.now(datetime.timezone.utc)
        require(abs(now - utc) < datetime.timedelta(minutes=1), f"utc {utc}, now {now}")
        return f"utc {text}, tzo {tzo}"

    await step("[info] the server's time is now (XEP-0202)", entity_time(), both)

    async def uptime():
        result = await alice1.plugin["xep_0012"].get_last_activity(server.domain, timeout=STEP_TIMEOUT)
        seconds = result["last_activity"]["seconds"]
        require(0 <= seconds < 3600, f"uptime {seconds} s")
        return f"{seconds} s"

    await step("[info] the server's uptime (XEP-0012 to the domain)", uptime(), both)

    async def contact_online():
        result = await alice1.plugin["xep_0012"].get_last_activity(bob.jid, timeout=STEP_TIMEOUT)
        require(result["last_activity"]["seconds"] == 0, f"{result['last_activity']['seconds']} s")

    await step("[info] bob, online, was last active 0 s ago (XEP-0012 to a contact)", contact_online(), both)
    await step("[info] both log out", asyncio.gather(alice1.stop(), bob1.stop()), both)


SCENARIOS = {"carbons": carbons, "vcard": vcard, "blocking": blocking, "resumption": resumption, "info": info}


async def main():
    host, port, domain, ca_certificate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    server = Server(host, port, domain, ca_certificate)
    names = sys.argv[5:] or list(SCENARIOS)
    unknown = [name for name in names if name not in SCENARIOS]
    if unknown:
        sys.exit(f"unknown scenarios {unknown}; known: {', '.join(SCENARIOS)}")
    for name in names:
        await SCENARIOS[name](server)
    print(f"ok   all extension interop steps passed: {' '.join(names)}")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
