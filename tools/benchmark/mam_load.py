"""Message archive (XEP-0313) load: filling one user's archive, querying it.

Filling: peers, logged in and available, send chat messages to the owner's
bare JID while the owner is available (so that nothing goes to offline
storage); each peer sends a batch, then pings (XEP-0199), and sends the
next batch once the reply is in, so at most one batch per peer is in
flight. Every server here archives a message for its recipient (and for
its sender).

Querying: on a session of the owner that never sends presence (so that it
gets nothing but the replies), a query is sent and timed until its
closing `<iq type='result'>`; the `<result>` messages before it are counted
and their archive ids kept, for queries by id.
"""
import asyncio
import datetime
import random
import re
import time


NS_MAM = "urn:xmpp:mam:2"
RESULT_ID = re.compile(rb"<result\b[^>]*\bid=['\"]([^'\"]+)['\"]")
COUNT = re.compile(rb"<count>(\d+)</count>")
FILLER = "an archived chat message, long enough to look like one"


def timestamp(seconds):
    """XEP-0082 DateTime in UTC with milliseconds."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


async def fill(peers, owner_jid, count, batch, first_seq, progress):
    """`count` messages from `peers` (routing_load Sessions, in turn) to
    `owner_jid`, at most `batch` per peer in flight; returns once every
    peer's last ping is answered. `progress["sent"]` counts the messages
    whose batch has been answered."""
    shares = [range(first_seq + index, first_seq + count, len(peers)) for index in range(len(peers))]

    async def send_share(peer, share):
        for start in range(0, len(share), batch):
            peer.send("".join(
                f"<message to='{owner_jid}' type='chat' id='a{seq}'><body>{seq} {FILLER}</body></message>"
                for seq in share[start:start + batch]))
            await peer.sync()
            progress["sent"] += len(share[start:start + batch])

    await asyncio.gather(*(send_share(peer, share) for peer, share in zip(peers, shares)))


class Querier:
    """The owner's query session: an xmpp_load.Connection after login."""

    def __init__(self, conn, timeout):
        self.conn, self.timeout = conn, timeout
        self.next_id = 0
        self.last_reply = b""

    async def query(self, fields=(), after=None, before=None, page=50):
        """One query with the form `fields` [(var, value)] and RSM `after`
        or `before` (an archive id; "" for the last page); returns
        (seconds, archive ids received, error text or None)."""
        self.next_id += 1
        query_id = f"q{self.next_id}"
        form = "".join(f"<field var='{var}'><value>{value}</value></field>" for var, value in fields)
        paging = (f"<after>{after}</after>" if after is not None else "") + (
            f"<before>{before}</before>" if before is not None else "")
        reply = re.compile(rb"<iq\b[^>]*\bid=['\"]" + query_id.encode() + rb"['\"][^>]*?(?:/>|>.*?</iq>)", re.S)
        started = time.perf_counter()
        self.conn.send(
            f"<iq type='set' id='{query_id}'><query xmlns='{NS_MAM}' queryid='{query_id}'>"
            f"<x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE' type='hidden'>"
            f"<value>{NS_MAM}</value></field>{form}</x>"
            f"<set xmlns='http://jabber.org/protocol/rsm'><max>{page}</max>{paging}</set></query></iq>")
        async with asyncio.timeout(self.timeout):
            match = await self.conn.expect(reply)
        elapsed = time.perf_counter() - started
        ids = [found.decode() for found in RESULT_ID.findall(match.string, 0, match.start())]
        iq = self.last_reply = match.group(0)
        error = None if b"type='result'" in iq or b'type="result"' in iq else iq[:300].decode(errors="replace")
        return elapsed, ids, error

    async def archived(self):
        """How many items the archive says it holds: RSM's `<count>` of an
        empty page of the unfiltered archive (XEP-0059 §2.6), or None if
        the server gives none."""
        _, _, error = await self.query(page=0)
        counted = COUNT.search(self.last_reply)
        return None if error or counted is None else int(counted.group(1))


class QueryMix:
    """The four kinds of query measured, each with parameters drawn at
    random (seeded): by correspondent (`with`, one of `peers`), by time
    window (`start`/`end`: a `window_fraction` of one of the `fills`, the
    (start, end) times when the archive was being filled, drawn by
    length), and by archive id (RSM `after` and `before`, ids seen in the
    earlier queries' results)."""

    KINDS = ("with", "time window", "after id", "before id")

    def __init__(self, peers, fills, window_fraction=0.01, seed=1):
        self.peers, self.fills, self.window_fraction = peers, fills, window_fraction
        self.random = random.Random(seed)
        self.ids = []

    def arguments(self, kind):
        """The `Querier.query` keyword arguments for one query of `kind`."""
        if kind == "with":
            return {"fields": [("with", self.random.choice(self.peers))]}
        if kind == "time window":
            first, last = self.random.choices(self.fills, [end - start for start, end in self.fills])[0]
            width = (last - first) * self.window_fraction
            start = self.random.uniform(first, last - width)
            return {"fields": [("start", timestamp(start)), ("end", timestamp(start + width))]}
        chosen = self.random.choice(self.ids) if self.ids else ""
        return {"after": chosen} if kind == "after id" else {"before": chosen}

    def note(self, ids):
        self.ids += ids
