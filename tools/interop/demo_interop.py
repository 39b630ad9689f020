#!/usr/bin/env python3
"""Checks `swiftletd demo` with a third-party library (slixmpp).

Against a running demo server (loopback only), as its demo users:
  1. alice logs in over STARTTLS with the demo password; her roster holds
     bob and carol with subscription="both",
  2. the messages the demo left for her arrive, with delay stamps,
  3. bob logs in and gets his waiting message; alice sees bob available,
  4. alice sends bob a chat message and bob receives it,
  5. alice and bob enter the demo's members-only room lobby@conference.DOMAIN
     (XEP-0045), alice gets the room's history (three messages the demo
     left), and what bob says there reaches alice.
Prints one line per step and exits non-zero on the first failure; every
wait has a deadline.

Usage: demo_interop.py HOST PORT DOMAIN CA_CERTIFICATE
"""
import asyncio
import logging
import sys

import slixmpp

STEP_TIMEOUT = 20
PASSWORD = "swiftlet"


class DemoUser(slixmpp.ClientXMPP):
    """A demo user that records its roster, presence and messages."""

    def __init__(self, jid, ca_certificate):
        super().__init__(jid, PASSWORD)
        self.enable_direct_tls = False
        self.ca_certs = ca_certificate
        self.register_plugin("xep_0203")
        self.register_plugin("xep_0045")
        self.started = asyncio.get_event_loop().create_future()
        self.messages = []
        self.available = set()
        self.room_messages = []
        self.subjects = 0
        self.changed = asyncio.Event()
        self.add_event_handler("session_start", self.on_start)
        self.add_event_handler("message", self.on_message)
        self.add_event_handler("presence_available", self.on_available)
        self.add_event_handler("groupchat_message", self.on_groupchat)
        self.add_event_handler("groupchat_subject", self.on_subject)

    async def on_start(self, _event):
        await self.get_roster()
        self.send_presence()
        if not self.started.done():
            self.started.set_result(True)

    def on_message(self, message):
        if message["type"] in ("chat", "normal") and message["body"]:
            self.messages.append((message["from"].bare, message["body"], message["delay"]["stamp"]))
            self.changed.set()

    def on_groupchat(self, message):
        if message["body"]:
            self.room_messages.append((message["from"].resource, message["body"]))
            self.changed.set()

    def on_subject(self, _message):
        # The subject comes last when one enters a room (XEP-0045 §7.2.16).
        self.subjects += 1
        self.changed.set()

    def on_available(self, presence):
        self.available.add(presence["from"].bare)
        self.changed.set()

    async def until(self, predicate):
        while not predicate():
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), STEP_TIMEOUT)


def check(name, condition, detail):
    print(f"{'ok  ' if condition else 'FAIL'} {name}: {detail}")
    if not condition:
        sys.exit(1)


async def login(user, host, port, domain, ca_certificate):
    client = DemoUser(f"{user}@{domain}/interop", ca_certificate)
    client.connect(host=host, port=port)
    await asyncio.wait_for(client.started, STEP_TIMEOUT)
    return client


async def main():
    host, port, domain, ca_certificate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    alice = await login("alice", host, port, domain, ca_certificate)
    roster = {jid: alice.client_roster[jid]["subscription"] for jid in alice.client_roster if jid != alice.boundjid.bare}
    expected = {f"bob@{domain}": "both", f"carol@{domain}": "both"}
    check("alice logs in; bob and carol are contacts (both)", roster == expected, roster)

    await alice.until(lambda: len(alice.messages) >= 2)
    senders = [sender for sender, _, _ in alice.messages]
    stamped = all(stamp is not None for _, _, stamp in alice.messages)
    check("the demo's waiting messages reach alice, delayed",
          senders == [f"bob@{domain}", f"carol@{domain}"] and stamped, alice.messages)

    bob = await login("bob", host, port, domain, ca_certificate)
    await bob.until(lambda: len(bob.messages) >= 1)
    check("bob's waiting message arrives", bob.messages[0][0] == f"alice@{domain}", bob.messages)
    await alice.until(lambda: f"bob@{domain}" in alice.available)
    check("alice sees bob available", True, sorted(alice.available))

    alice.send_message(mto=f"bob@{domain}", mbody="Hello from the interop test", mtype="chat")
    await bob.until(lambda: any(body == "Hello from the interop test" for _, body, _ in bob.messages))
    check("alice's message reaches bob", True, bob.messages[-1])

    room = f"lobby@conference.{domain}"
    for client, nick in ((alice, "Alice"), (bob, "Bob")):
        client.plugin["xep_0045"].join_muc(room, nick, maxhistory="10")
        await client.until(lambda: client.subjects >= 1)
    check("alice and bob enter the members-only lobby", True, room)
    nicks = [nick for nick, _ in alice.room_messages]
    check("the lobby's history reaches alice", nicks == ["Alice", "Bob", "Carol"], alice.room_messages)
    bob.send_message(mto=room, mbody="Hello, lobby", mtype="groupchat")
    await alice.until(lambda: ("Bob", "Hello, lobby") in alice.room_messages)
    check("what bob says in the lobby reaches alice", True, alice.room_messages)

    for client in (alice, bob):
        client.disconnect()
    await asyncio.sleep(0.1)


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(asyncio.wait_for(main(), 4 * STEP_TIMEOUT))
