#!/usr/bin/env python3
"""Message archive interop check of swiftletd with slixmpp.

Two slixmpp clients, A and B, each with a fresh random account, against a
running server (loopback only):
  1. both register in-band (XEP-0077) over STARTTLS and log in; B is
     available,
  2. A's account advertises urn:xmpp:mam:2 and urn:xmpp:sid:0 in disco#info,
  3. A sends B a dozen chat messages; each reaches B with an XEP-0359
     stanza-id by B's bare JID,
  4. B pages through its archive with slixmpp's RSM iterator (pages of 5,
     forward): the twelve bodies in order, under the ids B was told,
  5. A fetches one page of 5 with B, then pages backward from the end
     (<before/>): all twelve, newest page first,
  6. a time window (start/end) and paging from a known id select what
     they should,
  7. an unknown RSM <after/> id is item-not-found,
  8. B's preferences default to always; set to never, a new message is
     not archived for B but is for A; back to always,
  9. B goes offline, A sends two messages; B logs in, gets them with
     stanza ids, and finds them in its archive.
Prints one line per step and exits non-zero on the first failure. Every
step has a deadline, so the script always ends by itself.

Usage: mam_interop.py HOST PORT DOMAIN CA_CERTIFICATE
(CA_CERTIFICATE: the server's local CA root, which slixmpp is
told to trust, so TLS is verified for real.)
"""
import asyncio
import datetime
import logging
import sys

import slixmpp
from slixmpp.exceptions import IqError

import slixmpp_account

STEP_TIMEOUT = 20
COUNT = 12
PLUGINS = ("xep_0030", "xep_0059", "xep_0199", "xep_0203", "xep_0297", "xep_0313", "xep_0359", "xep_0441")


class Peer(slixmpp_account.Peer):
    """One slixmpp account: its connection and the messages it received,
    as (body, stanza-id id, stanza-id by)."""

    def __init__(self, server, name):
        super().__init__(server, name, PLUGINS, "mam", self._record, STEP_TIMEOUT)

    @staticmethod
    def _record(message):
        return message["body"], message["stanza_id"]["id"], message["stanza_id"]["by"]

    @property
    def mam(self):
        return self.client.plugin["xep_0313"]

    async def archive(self, **query):
        """Every archived message the iterator yields: (id, body, stamp)."""
        found = []
        async for message in self.mam.iterate(**query):
            result = message["mam_result"]
            found.append((result["id"], result["forwarded"]["stanza"]["body"], result["forwarded"]["delay"]["stamp"]))
        return found


require = slixmpp_account.require


async def step(name, coroutine):
    await slixmpp_account.step(name, coroutine, STEP_TIMEOUT)


async def scenario(server):
    a, b = Peer(server, "mama"), Peer(server, "mamb")
    bodies = [f"archived {n}/{COUNT} héllo 👋 <&>" for n in range(1, COUNT + 1)]

    async def register_and_login():
        await a.register()
        await b.register()
        await a.login()
        await b.login()
        return f"A={a.jid}, B={b.jid}"

    await step("both register and log in", register_and_login())

    async def disco():
        info = await a.client.plugin["xep_0030"].get_info(jid=a.jid, timeout=STEP_TIMEOUT)
        features = info["disco_info"]["features"]
        require("urn:xmpp:mam:2" in features and "urn:xmpp:sid:0" in features, f"features {features}")
        return "mam:2, #extended" if "urn:xmpp:mam:2#extended" in features else "mam:2"

    await step("A's account advertises the archive", disco())

    async def send_all():
        for body in bodies:
            a.client.send_message(mto=b.jid, mbody=body, mtype="chat")
        await b.until(lambda: len(b.messages) >= COUNT)
        require([m[0] for m in b.messages] == bodies, f"got {[m[0] for m in b.messages]!r}")
        require(all(m[1] and m[2] == b.jid for m in b.messages), f"stanza ids {[m[1:] for m in b.messages]!r}")

    await step(f"A sends {COUNT} chats; B gets each with a stanza-id by B", send_all())

    async def b_pages_forward():
        archived = await b.archive(rsm={"max": 5})
        require([m[1] for m in archived] == bodies, f"bodies {[m[1] for m in archived]!r}")
        require([m[0] for m in archived] == [m[1] for m in b.messages], "archive ids differ from the stanza ids")
        return f"{len(archived)} messages in pages of 5"

    await step("B pages forward through its archive", b_pages_forward())

    async def a_one_page_then_backward():
        page = await a.mam.retrieve(with_jid=slixmpp.JID(b.jid), rsm={"max": 5}, timeout=STEP_TIMEOUT)
        first = [m["mam_result"]["forwarded"]["stanza"]["body"] for m in page["mam"]["results"]]
        require(first == bodies[:5], f"first page {first!r}")
        require(page["mam_fin"]["complete"] not in ("true", True), "a first page of 5 of 12 is not complete")
        require(page["mam_fin"]["rsm"]["count"] == str(COUNT), f"count {page['mam_fin']['rsm']['count']!r}")
        backward = await a.archive(with_jid=slixmpp.JID(b.jid), reverse=True, rsm={"max": 5})
        require([m[1] for m in backward] == list(reversed(bodies)), f"backward {[m[1] for m in backward]!r}")
        return "5 of 12, then 12 newest first"

    await step("A fetches one page with B, then pages backward from the end", a_one_page_then_backward())

    async def windows():
        archived = await b.archive(rsm={"max": 50})
        stamps = [m[2] for m in archived]
        require(all(isinstance(s, datetime.datetime) for s in stamps), f"stamps {stamps!r}")
        require(stamps == sorted(stamps), "stamps out of order")
        # Several messages may share a millisecond: expect what the stamps say.
        start, end = stamps[3], stamps[8]
        expected = [m[1] for m in archived if start <= m[2] <= end]
        window = await b.archive(start=start, end=end, rsm={"max": 50})
        require([m[1] for m in window] == expected, f"window {[m[1] for m in window]!r}")
        after = await b.archive(rsm={"max": 2, "after": archived[8][0]})
        require([m[1] for m in after] == bodies[9:], f"after {[m[1] for m in after]!r}")
        return f"{len(window)} from {start.isoformat()} to {end.isoformat()}; {len(after)} after the 9th"

    await step("a start/end window, and the messages after a known id", windows())

    async def unknown_after():
        try:
            await a.mam.retrieve(rsm={"max": 5, "after": "no-such-id"}, timeout=STEP_TIMEOUT)
        except IqError as error:
            require(error.iq["error"]["condition"] == "item-not-found", f"condition {error.iq['error']['condition']}")
            return "item-not-found"
        raise AssertionError("an unknown <after/> id was accepted")

    await step("an unknown <after/> id is item-not-found", unknown_after())

    async def preferences():
        prefs = b.client.plugin["xep_0441"]
        default, always, never = await prefs.get_preferences(timeout=STEP_TIMEOUT)
        require(default == "always" and not always and not never, f"prefs {default} {always} {never}")
        await prefs.set_preferences(default="never", timeout=STEP_TIMEOUT)
        before = len(b.messages)
        a.client.send_message(mto=b.jid, mbody="unarchived", mtype="chat")
        await b.until(lambda: len(b.messages) > before)
        require(not b.messages[-1][1], "a message B's archive does not keep came with a stanza-id")
        b_bodies = [m[1] for m in await b.archive(rsm={"max": 50})]
        a_bodies = [m[1] for m in await a.archive(rsm={"max": 50})]
        require("unarchived" not in b_bodies and "unarchived" in a_bodies, f"B {b_bodies[-1:]}, A {a_bodies[-1:]}")
        await prefs.set_preferences(default="always", timeout=STEP_TIMEOUT)
        return "never keeps it out of B's archive only"

    await step("B's preferences: always by default, never when set", preferences())

    offline = ["while away 1", "while away 2"]

    async def offline_messages():
        await b.logout()
        for body in offline:
            a.client.send_message(mto=b.jid, mbody=body, mtype="chat")
        await a.client.plugin["xep_0199"].ping(jid=server["domain"], timeout=STEP_TIMEOUT)
        b.messages.clear()
        await b.login()
        await b.until(lambda: len(b.messages) >= len(offline))
        require([m[0] for m in b.messages] == offline, f"offline {b.messages!r}")
        archived = await b.archive(rsm={"max": 50})
        require([m[1] for m in archived[-2:]] == offline, f"archive ends {[m[1] for m in archived[-2:]]!r}")
        require([m[0] for m in archived[-2:]] == [m[1] for m in b.messages], "offline stanza ids differ")
        return f"{len(archived)} archived in all"

    await step("B offline: messages archived, delivered later with their ids", offline_messages())
    async def log_out():
        await asyncio.gather(a.logout(), b.logout())

    await step("both log out", log_out())


async def main():
    host, port, domain, ca_certificate = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    await scenario({"host": host, "port": port, "domain": domain, "ca": ca_certificate})
    print("ok   all MAM interop steps passed")


if __name__ == "__main__":
    logging.basicConfig(level=logging.CRITICAL)
    asyncio.run(main())
