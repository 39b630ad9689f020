"""Presence broadcast load (RFC 6121 §3, §4) on routing_load Sessions.

A hub user and its contacts, all logged in and available, become mutually
subscribed through the protocol: the hub asks each contact to subscribe
(`subscribe`), every contact approves (`subscribed`), then the reverse.
Then the hub changes its presence and every contact must receive the
change; the time until the last contact has it is the broadcast's latency.
Presence is read without an XML parser, from the opening `<presence …>`
tags and a marker in the broadcast's `<status>`.
"""
import asyncio
import re
import time

PRESENCE_TAG = re.compile(rb"<presence\b[^>]*>")
FROM = re.compile(rb"\bfrom=['\"]([^'\"/]+)")
TYPE = re.compile(rb"\btype=['\"]([a-z]+)['\"]")
# Text arrives whole in the chunk of its closing tag (see routing_load.Session).
MARKER = re.compile(rb"broadcast-(\d+)</status>")


class Participant:
    """One session of the roster: approves every subscription request it
    gets, counts the approvals it receives, and notes when each broadcast
    marker arrives (`arrivals[marker] = perf_counter_ns`)."""

    def __init__(self, session, on_approved, on_marker):
        self.session = session
        self.approved_by = set()
        self._on_approved, self._on_marker = on_approved, on_marker
        session.on_chunk = self._on_chunk

    def _on_chunk(self, chunk, now_ns):
        replies = []
        for tag in PRESENCE_TAG.findall(chunk):
            kind, sender = TYPE.search(tag), FROM.search(tag)
            if kind is None or sender is None:
                continue
            if kind.group(1) == b"subscribe":
                replies.append(f"<presence to='{sender.group(1).decode()}' type='subscribed'/>")
            elif kind.group(1) == b"subscribed" and sender.group(1) not in self.approved_by:
                self.approved_by.add(sender.group(1))
                self._on_approved()
        if replies:
            self.session.send("".join(replies))
        for marker in MARKER.findall(chunk):
            self._on_marker(int(marker), now_ns)


class Roster:
    """A hub session and its contact sessions, made mutual contacts by
    `subscribe()`; `broadcast()` measures one presence change."""

    def __init__(self, hub, contacts):
        self.hub, self.contacts = hub, contacts
        self._pending = None
        self._waiting = 0
        self._arrivals = {}
        self._marker = 0
        self.hub_participant = Participant(hub, self._approved, lambda marker, now_ns: None)
        self.contact_participants = [Participant(contact, self._approved, self._arrived) for contact in contacts]

    def _approved(self):
        self._waiting -= 1
        if self._waiting <= 0 and self._pending is not None and not self._pending.done():
            self._pending.set_result(None)

    def _arrived(self, marker, now_ns):
        arrivals = self._arrivals.get(marker)
        if arrivals is None:
            return
        arrivals.append(now_ns)
        self._waiting -= 1
        if len(arrivals) == len(self.contacts) and not self._pending.done():
            self._pending.set_result(None)

    def _expect(self, waiting):
        """A future done once `waiting` approvals or arrivals are in; set
        up before the stanzas that cause them are sent."""
        self._waiting = waiting
        self._pending = asyncio.get_running_loop().create_future()
        if waiting == 0:
            self._pending.set_result(None)
        return self._pending

    async def _wait(self, pending, timeout, what):
        try:
            await asyncio.wait_for(pending, timeout)
        except TimeoutError:
            raise RuntimeError(f"{what}: {self._waiting} of {len(self.contacts)} missing "
                               f"after {timeout:.0f}s") from None

    async def subscribe(self, timeout):
        """Hub to contacts, then contacts to hub: a `subscribe` each way,
        approved by the other side; returns once every approval arrived
        and the sessions' pings are answered."""
        hub_jid = self.hub.bare_jid
        # Approvals go only to resources that have asked for their roster
        # ("interested resources", RFC 6121 §2.1.1).
        everyone = [self.hub] + self.contacts
        for session in everyone:
            session.send("<iq type='get' id='roster'><query xmlns='jabber:iq:roster'/></iq>")
        await asyncio.wait_for(asyncio.gather(*(session.sync() for session in everyone)), timeout)
        pending = self._expect(len(self.contacts))
        self.hub.send("".join(f"<presence to='{contact.bare_jid}' type='subscribe'/>" for contact in self.contacts))
        await self._wait(pending, timeout, "the contacts' approvals")
        pending = self._expect(len(self.contacts))
        for contact in self.contacts:
            contact.send(f"<presence to='{hub_jid}' type='subscribe'/>")
        await self._wait(pending, timeout, "the hub's approvals")
        await asyncio.wait_for(asyncio.gather(*(session.sync() for session in everyone)), timeout)

    async def broadcast(self, timeout):
        """One presence change of the hub (a new status); returns the
        latency of each contact's copy in nanoseconds, sorted."""
        self._marker += 1
        marker = self._marker
        self._arrivals[marker] = arrivals = []
        pending = self._expect(len(self.contacts))
        show = "away" if marker % 2 else "chat"
        sent_ns = time.perf_counter_ns()
        self.hub.send(f"<presence><show>{show}</show><status>broadcast-{marker}</status></presence>")
        try:
            await self._wait(pending, timeout, f"broadcast {marker}")
        finally:
            del self._arrivals[marker]
        return sorted(arrival - sent_ns for arrival in arrivals)
