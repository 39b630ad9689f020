"""Group chat load (XEP-0045) on bound, available sessions.

The sessions are routing_load.Session objects (no XML parser): joining a
room, the owner's instant-room form and the other requests wait for a
regular expression in what the session receives. During a run a few of
the occupants send groupchat messages to the room's bare JID, each body
carrying `run sender seq sent_ns`; every occupant's copy is checked off
(each message must reach each occupant exactly once, the sender's own
echo included) and its latency taken from the sender's clock (the same
process).
"""
import asyncio
import re
import time

import routing_load

MUC_NS = "http://jabber.org/protocol/muc"
SELF_PRESENCE = re.compile(rb"""<status\s+code=['"]110['"]""")
ANY_ERROR = re.compile(rb"""<(?:presence|iq|message)\b[^>]*\btype=['"]error['"].*?</(?:presence|iq|message)>""", re.S)
FILLER = "hello, this is a group chat message to everyone in the room"


def iq_reply(request_id):
    """The reply, result or error, to the IQ sent with `request_id`."""
    return re.compile(rb"<iq\b[^>]*\bid=['\"]" + re.escape(request_id.encode()) + rb"['\"].*?(?:/>|</iq>)", re.S)


async def exchange(session, stanza, reply, timeout):
    """Sends `stanza` on `session` and returns what it receives up to and
    including the first match of `reply` (a compiled bytes pattern).
    Raises RuntimeError on an error stanza received meanwhile, TimeoutError
    after `timeout` seconds. The session's `on_chunk` must be free."""
    found = asyncio.get_running_loop().create_future()
    received = bytearray()

    def on_chunk(chunk, _now_ns):
        start = max(0, len(received) - 200)  # a match may straddle chunks
        received.extend(chunk)
        if found.done():
            return
        error = ANY_ERROR.search(received, start)
        if error:
            found.set_exception(RuntimeError(
                f"{session.bare_jid}: {bytes(error.group(0)[:400]).decode(errors='replace')}"))
        elif reply.search(received, start):
            found.set_result(bytes(received))

    session.on_chunk = on_chunk
    try:
        session.send(stanza)
        async with asyncio.timeout(timeout):
            return await found
    finally:
        session.on_chunk = None


def join_stanza(room, nick):
    """Presence that joins `room` as `nick` and asks for no history."""
    return (f"<presence to='{room}/{nick}'><x xmlns='{MUC_NS}'><history maxstanzas='0'/></x></presence>")


async def create_room(owner, room, nick, timeout):
    """`owner` joins first, which creates the room (status 201), and
    submits the empty configuration form: an instant room (XEP-0045
    §10.1.2), which unlocks it on servers that lock new rooms."""
    joined = await exchange(owner, join_stanza(room, nick), SELF_PRESENCE, timeout)
    if not re.search(rb"""code=['"]201['"]""", joined):
        raise RuntimeError(f"{room} existed already (no status 201 in the owner's join)")
    await exchange(
        owner, f"<iq type='set' id='instant' to='{room}'><query xmlns='{MUC_NS}#owner'>"
        "<x xmlns='jabber:x:data' type='submit'/></query></iq>", iq_reply("instant"), timeout)


async def join_all(sessions, room, nicks, concurrency, timeout):
    """Every session joins `room` under its nick; returns when each has
    had its own presence from the room (status 110)."""
    queue = iter(range(len(sessions)))

    async def worker():
        for index in queue:
            await exchange(sessions[index], join_stanza(room, nicks[index]), SELF_PRESENCE, timeout)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def room_features(session, room, timeout):
    """The features the room lists in its disco#info (XEP-0030)."""
    reply = await exchange(
        session, f"<iq type='get' id='roominfo' to='{room}'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>",
        iq_reply("roominfo"), timeout)
    return sorted({match.decode() for match in re.findall(rb"""<feature\s+var=['"]([^'"]+)['"]""", reply)})


async def archived_count(session, room, timeout):
    """How many messages the room's archive (XEP-0313) holds, from the
    RSM count of a query for one item; None when the room answers with an
    error (no archive) or without a count."""
    try:
        reply = await exchange(
            session, f"<iq type='set' id='mamcount' to='{room}'><query xmlns='urn:xmpp:mam:2' queryid='count'>"
            "<set xmlns='http://jabber.org/protocol/rsm'><max>1</max></set></query></iq>",
            iq_reply("mamcount"), timeout)
    except RuntimeError:
        return None
    count = re.search(rb"<count>(\d+)</count>", reply)
    return int(count.group(1)) if count else None


def groupchat(room, run, sender, seq):
    """A groupchat message whose body stamps the moment it is built."""
    return (f"<message to='{room}' type='groupchat' id='g{run}-{sender}-{seq}'><body>{run} {sender} {seq} "
            f"{time.perf_counter_ns()} {FILLER}</body></message>")


class MUCRun:
    """`senders` (occupants themselves) send to `room`; every one of
    `occupants` should get every message once. Either closed loop, each
    sender keeping `window` messages in flight (one is done when its echo
    comes back to the sender), or open loop at `rate` messages per second
    per sender (when `rate` is set). Sending stops at the deadline or at
    `per_sender` messages per sender."""

    TICK_SECONDS = 0.005

    def __init__(self, run_id, room, senders, occupants, window, rate, per_sender):
        self.run_id, self.room, self.senders = run_id, room, senders
        self.window, self.rate, self.per_sender = window, rate, per_sender
        self.occupant_count = len(occupants)
        self.sent = [0] * len(senders)
        self.total_sent = 0
        self.received = self.duplicates = self.stale = self.foreign = 0
        # Stanza ids the room put on the copies the senders got (XEP-0359).
        self.room_stanza_ids = self.sender_copies = 0
        self.per_occupant = [0] * len(occupants)
        self.latencies_ns = []
        self.stopped = False
        self.started_ns = self.last_received_ns = 0
        self.done = asyncio.get_running_loop().create_future()
        sender_index = {id(session): index for index, session in enumerate(senders)}
        for index, session in enumerate(occupants):
            session.on_chunk = self._receiver(index, sender_index.get(id(session)))

    def _send(self, sender, count):
        first = self.sent[sender]
        count = min(count, self.per_sender - first)
        if count <= 0 or self.stopped:
            return
        self.sent[sender] = first + count
        self.total_sent += count
        self.senders[sender].send(
            "".join(groupchat(self.room, self.run_id, sender, seq) for seq in range(first, first + count)))

    def _finish_if_done(self):
        all_sent = self.stopped or self.total_sent == self.per_sender * len(self.senders)
        if all_sent and self.received == self.total_sent * self.occupant_count and not self.done.done():
            self.done.set_result(None)

    def _receiver(self, index, own_sender):
        """The on_chunk of occupant `index`; `own_sender` is its index among
        the senders, or None. seen[s] has a byte per message of sender s."""
        seen = [bytearray(1024) for _ in self.senders]
        run_id, senders = str(self.run_id).encode(), len(self.senders)
        stanza_id = re.compile(rb"<stanza-id\b[^>]*\bby=['\"]" + re.escape(self.room.encode()) + rb"['\"]")

        def on_chunk(chunk, now_ns):
            arrived = echoed = 0
            for run, sender, seq, sent_ns in routing_load.BODY.findall(chunk):
                if run != run_id:
                    self.stale += 1
                    continue
                sender, seq = int(sender), int(seq)
                if sender >= senders:
                    self.foreign += 1
                    continue
                marks = seen[sender]
                if seq >= len(marks):
                    marks.extend(bytes(max(seq + 1, 2 * len(marks)) - len(marks)))
                if marks[seq]:
                    self.duplicates += 1
                    continue
                marks[seq] = 1
                self.latencies_ns.append(now_ns - int(sent_ns))
                arrived += 1
                if sender == own_sender:
                    echoed += 1
            if arrived:
                self.received += arrived
                self.per_occupant[index] += arrived
                self.last_received_ns = now_ns
                if own_sender is not None:
                    self.sender_copies += arrived
                    self.room_stanza_ids += len(stanza_id.findall(chunk))
                    if echoed and not self.rate:
                        self._send(own_sender, echoed)
                self._finish_if_done()

        return on_chunk

    async def _pace(self):
        """Open loop: every tick each sender sends what it owes by now."""
        while not self.stopped:
            elapsed = (time.perf_counter_ns() - self.started_ns) / 1e9
            for sender in range(len(self.senders)):
                self._send(sender, int(elapsed * self.rate) + 1 - self.sent[sender])
            await asyncio.sleep(self.TICK_SECONDS)

    async def run(self, seconds, drain_seconds):
        """Runs the load; returns when every copy of every message sent has
        arrived, or `drain_seconds` after the deadline at the latest."""
        self.started_ns = time.perf_counter_ns()
        pacer = None
        if self.rate:
            pacer = asyncio.create_task(self._pace())
        else:
            for sender in range(len(self.senders)):
                self._send(sender, self.window)
        try:
            await asyncio.wait_for(asyncio.shield(self.done), seconds)
        except asyncio.TimeoutError:
            pass
        self.stopped = True
        if pacer is not None:
            await pacer
        self.sending_s = (time.perf_counter_ns() - self.started_ns) / 1e9
        self._finish_if_done()
        try:
            await asyncio.wait_for(asyncio.shield(self.done), drain_seconds)
        except asyncio.TimeoutError:
            pass

    @staticmethod
    def detach(occupants):
        for session in occupants:
            session.on_chunk = None

    @property
    def expected(self):
        return self.total_sent * self.occupant_count

    @property
    def lost(self):
        return self.expected - self.received

    def losses(self):
        """{occupant index: copies it is missing}, for those missing any."""
        return {index: self.total_sent - count for index, count in enumerate(self.per_occupant)
                if count < self.total_sent}
