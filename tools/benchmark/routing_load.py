"""Message-routing load on bound, available sessions (RFC 6121 §8).

After a login from xmpp_load.py, each connection is handed to a `Session`:
an asyncio Protocol that reads without an XML parser. It cuts what it has
read after the last `>` (or before a `<body>` whose text has not all
arrived), so every complete tag and body is seen once, and finds
message bodies, its ping replies and error stanzas with regular
expressions. Every body carries `run pair seq sent_ns`: the receiver
checks that each message arrives exactly once, at the right receiver, and
computes its latency from the sender's clock (the same process).
"""
import asyncio
import re
import time

import xmpp_load

BODY = re.compile(rb"<body[^>]*>(\d+) (\d+) (\d+) (\d+) ")
SYNC_REPLY = re.compile(rb"<iq\b[^>]*\bid=['\"]sync(\d+)['\"]")
ERROR = re.compile(rb"type=['\"]error['\"]|<stream:error")
FILLER = "hello, this is a routed chat message"


def message(to, run, pair, seq):
    """A chat message whose body stamps the moment it is built."""
    return (f"<message to='{to}' type='chat' id='m{seq}'><body>{run} {pair} {seq} "
            f"{time.perf_counter_ns()} {FILLER}</body></message>")


class Session(asyncio.Protocol):
    """A bound session taken over from its StreamReader after login.

    `on_chunk(chunk, now_ns)`, when set, gets every complete run of tags.
    Error stanzas and stream errors are counted; the first is kept."""

    def __init__(self, conn, user, domain):
        self.bare_jid, self.domain = f"{user}@{domain}", domain
        # Kept: a StreamWriter closes its transport when it is collected.
        self.writer = conn.writer
        self.transport = conn.writer.transport
        self.buffer = b""
        self.on_chunk = None
        self.errors = 0
        self.first_error = None
        self.closed = False
        self._syncs = {}
        self._next_sync = 0
        self.transport.set_protocol(self)
        if conn.buffer:
            self.data_received(conn.buffer)

    def data_received(self, data):
        buffer = self.buffer + data
        end = buffer.rfind(b">") + 1
        body = buffer.rfind(b"<body", 0, end)
        if body > buffer.rfind(b"</body>", 0, end):
            end = body  # that '>' opened a body: keep it whole for BODY
        if end <= 0:
            self.buffer = buffer
            return
        chunk, self.buffer = buffer[:end], buffer[end:]
        if self.on_chunk is not None:
            self.on_chunk(chunk, time.perf_counter_ns())
        if self._syncs:
            for match in SYNC_REPLY.finditer(chunk):
                waiter = self._syncs.pop(int(match.group(1)), None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
        error = ERROR.search(chunk)
        if error:
            self.errors += len(ERROR.findall(chunk, error.start()))
            if self.first_error is None:
                start = error.start()
                self.first_error = chunk[max(0, start - 150):start + 250].decode(errors="replace")

    def connection_lost(self, exc):
        self.closed = True
        for waiter in self._syncs.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError(f"{self.bare_jid}: connection lost"))

    def send(self, text):
        self.transport.write(text.encode())

    async def sync(self):
        """Pings the server (XEP-0199) and waits for the reply: the stanzas
        this session sent before have then been handled."""
        if self.closed:
            raise ConnectionError(f"{self.bare_jid}: connection lost")
        self._next_sync += 1
        waiter = asyncio.get_running_loop().create_future()
        self._syncs[self._next_sync] = waiter
        self.send(f"<iq type='get' id='sync{self._next_sync}' to='{self.domain}'>"
                  "<ping xmlns='urn:xmpp:ping'/></iq>")
        await waiter

    async def become_available(self):
        """Initial presence (RFC 6121 §4.2), then a ping so that the server
        has made the session available before the caller goes on."""
        self.send("<presence/>")
        await self.sync()

    def close(self):
        self.transport.abort()


async def open_available(target, users, password, concurrency, resource="load"):
    """Logs in every user in `users`, makes each session available and
    returns the Sessions in the same order. Raises on the first failure."""
    sessions = [None] * len(users)
    queue = iter(range(len(users)))

    async def worker():
        for index in queue:
            conn = await xmpp_load.open_session(target, users[index], password, resource)
            session = Session(conn, users[index], target.domain)
            sessions[index] = session
            async with asyncio.timeout(target.timeout):
                await session.become_available()

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    except BaseException:
        for session in sessions:
            if session is not None:
                session.close()
        raise
    return sessions


class RoutingRun:
    """Pair i: senders[i] sends to the bare JID of receivers[i], keeping
    up to `window` messages in flight; a message is done when its receiver
    has it. Stops sending at `per_pair` messages per pair or at the
    deadline, whichever comes first."""

    def __init__(self, run_id, senders, receivers, per_pair, window):
        self.run_id, self.senders, self.per_pair, self.window = run_id, senders, per_pair, window
        self.targets = [receiver.bare_jid for receiver in receivers]
        pairs = len(senders)
        self.sent = [0] * pairs
        self.total_sent, self.target = 0, per_pair * pairs
        self.seen = [bytearray(per_pair) for _ in range(pairs)]
        self.latencies_ns = []
        self.received = self.duplicates = self.misrouted = self.stale = self.reordered = 0
        self.last_seq = [-1] * pairs
        self.stopped = False
        self.started_ns = self.last_received_ns = 0
        self.done = asyncio.get_running_loop().create_future()
        for pair, receiver in enumerate(receivers):
            receiver.on_chunk = self._receiver(pair)

    def _send(self, pair, count):
        first = self.sent[pair]
        count = min(count, self.per_pair - first)
        if count <= 0 or self.stopped:
            return
        self.sent[pair] = first + count
        self.total_sent += count
        to = self.targets[pair]
        self.senders[pair].send("".join(message(to, self.run_id, pair, seq) for seq in range(first, first + count)))

    def _finish_if_done(self):
        if self.received == self.total_sent and (self.stopped or self.total_sent == self.target):
            if not self.done.done():
                self.done.set_result(None)

    def _receiver(self, pair):
        seen, last_seq = self.seen[pair], self.last_seq

        def on_chunk(chunk, now_ns):
            arrived = 0
            for run, to_pair, seq, sent_ns in BODY.findall(chunk):
                if int(run) != self.run_id:
                    self.stale += 1
                    continue
                if int(to_pair) != pair:
                    self.misrouted += 1
                    continue
                seq = int(seq)
                if seen[seq]:
                    self.duplicates += 1
                    continue
                seen[seq] = 1
                if seq < last_seq[pair]:
                    self.reordered += 1
                last_seq[pair] = seq
                self.latencies_ns.append(now_ns - int(sent_ns))
                arrived += 1
            if arrived:
                self.received += arrived
                self.last_received_ns = now_ns
                self._send(pair, arrived)
                self._finish_if_done()

        return on_chunk

    async def run(self, seconds, drain_seconds):
        """Runs the load; returns when every message sent has arrived, or
        `drain_seconds` after the deadline at the latest."""
        self.started_ns = time.perf_counter_ns()
        for pair in range(len(self.senders)):
            self._send(pair, self.window)
        try:
            await asyncio.wait_for(asyncio.shield(self.done), seconds)
        except asyncio.TimeoutError:
            self.stopped = True
            self._finish_if_done()
            try:
                await asyncio.wait_for(asyncio.shield(self.done), drain_seconds)
            except asyncio.TimeoutError:
                pass

    def detach(self, receivers):
        for receiver in receivers:
            receiver.on_chunk = None

    @property
    def lost(self):
        return self.total_sent - self.received


class OfflineRun:
    """N messages to one offline user's bare JID from several senders, then
    that user comes online and receives them (XEP-0160)."""

    def __init__(self, run_id, senders, to, total):
        self.run_id, self.senders, self.to, self.total = run_id, senders, to, total
        self.seen = bytearray(total)
        self.received = self.duplicates = self.stale = 0
        self.last_received_ns = 0
        self.complete = asyncio.get_running_loop().create_future()

    async def store(self, first=0, end=None):
        """Every sender writes its share of the messages numbered from
        `first` to `end` (all by default), then pings: the server has
        handled (stored) them when the last ping reply arrives."""
        end = self.total if end is None else end
        count = len(self.senders)
        shares = [range(first + (index - first) % count, end, count) for index in range(count)]
        for sender, share in zip(self.senders, shares):
            sender.send("".join(message(self.to, self.run_id, 0, seq) for seq in share))
        await asyncio.gather(*(sender.sync() for sender in self.senders))

    def on_chunk(self, chunk, now_ns):
        for run, _pair, seq, _sent_ns in BODY.findall(chunk):
            if int(run) != self.run_id:
                self.stale += 1
                continue
            seq = int(seq)
            if self.seen[seq]:
                self.duplicates += 1
                continue
            self.seen[seq] = 1
            self.received += 1
            self.last_received_ns = now_ns
        if self.received == self.total and not self.complete.done():
            self.complete.set_result(None)

    async def deliver(self, session, seconds):
        """Initial presence on `session` (the recipient, logged in), then
        waits for every stored message or `seconds`."""
        session.on_chunk = self.on_chunk
        session.send("<presence/>")
        try:
            await asyncio.wait_for(asyncio.shield(self.complete), seconds)
        except asyncio.TimeoutError:
            pass
