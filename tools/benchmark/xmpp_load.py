"""A light XMPP load client: full c2s logins on raw asyncio sockets.

One login is: TCP connect, stream header, optionally STARTTLS and the TLS
handshake, SASL SCRAM-SHA-1 (RFC 5802, RFC 6120 §6), stream restart,
resource binding (RFC 6120 §7), then `</stream:stream>` and close. With
`Target.resume`, each concurrent client offers the session ticket of its
previous login, as a reconnecting client would (RFC 8446 §2.2).

The client is kept cheap so that the server, not the client, is what the
measurement sees: no XML parser (it waits for the closing tag it expects),
and SCRAM's PBKDF2 is computed once per account and salt, as RFC 5802 §5.1
allows a client to cache it. Everything else is done per login, including
checking the server's signature.
"""
import asyncio
import base64
import hashlib
import hmac
import re
import secrets
import ssl
import time

STREAM_HEADER = (
    "<?xml version='1.0'?><stream:stream to='{domain}' version='1.0' xml:lang='en' "
    "xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>"
)
MECHANISM = "SCRAM-SHA-1"
READ_SIZE = 65536

FEATURES_END = re.compile(rb"</(?:stream:)?features>")
PROCEED = re.compile(rb"<proceed\b[^>]*/>|</proceed>")
CHALLENGE = re.compile(rb"<challenge\b[^>]*>([^<]*)</challenge>")
SUCCESS = re.compile(rb"<success\b[^>]*?(?:/>|>([^<]*)</success>)")
IQ_END = re.compile(rb"<iq\b[^>]*?(?:/>|>.*?</iq>)", re.S)
STREAM_END = re.compile(rb"</stream:stream>")
FAILURE = re.compile(rb"<(?:stream:error|failure)\b.*?(?:/>|</(?:stream:error|failure)>)", re.S)


class LoginError(Exception):
    """A login step that did not go as a conforming server would make it go."""


class SCRAMCache:
    """SaltedPassword-derived keys per (user, salt, iterations, hash): RFC
    5802 §5.1 lets a client store them so that only the HMACs are per
    login."""

    def __init__(self):
        self._keys = {}

    def keys(self, password, salt, iterations, hash_name="sha1"):
        """(ClientKey, StoredKey, ServerKey) for this salt, count and hash
        ("sha1" or "sha256")."""
        cache_key = (password, salt, iterations, hash_name)
        keys = self._keys.get(cache_key)
        if keys is None:
            salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
            client_key = hmac.digest(salted, b"Client Key", hash_name)
            server_key = hmac.digest(salted, b"Server Key", hash_name)
            keys = (client_key, hashlib.new(hash_name, client_key).digest(), server_key)
            self._keys[cache_key] = keys
        return keys


class SCRAMClient:
    """The client's side of one SCRAM exchange (RFC 5802; SHA-256 as RFC
    7677), whatever carries its messages. `binding` is (type, data) for a
    -PLUS mechanism, None for none (gs2 header `n,,`). Attributes of the
    server-first message other than r, s and i (XEP-0474's `h`) are
    ignored."""

    def __init__(self, cache, user, password, hash_name="sha1", binding=None):
        self.cache, self.password, self.hash_name = cache, password, hash_name
        self.gs2_header = f"p={binding[0]},,".encode() if binding else b"n,,"
        self.binding_data = binding[1] if binding else b""
        self.nonce = secrets.token_urlsafe(18).encode()
        self.first_bare = b"n=" + user.encode() + b",r=" + self.nonce
        self.expected_server_final = None

    def client_first(self):
        return self.gs2_header + self.first_bare

    def client_final(self, server_first):
        """The client-final message for `server_first` (raw bytes)."""
        fields = dict(item.split(b"=", 1) for item in server_first.split(b","))
        nonce, salt, iterations = fields[b"r"], base64.b64decode(fields[b"s"]), int(fields[b"i"])
        if not nonce.startswith(self.nonce):
            raise LoginError("server nonce does not extend the client nonce")
        client_key, stored_key, server_key = self.cache.keys(self.password, salt, iterations, self.hash_name)
        without_proof = b"c=" + base64.b64encode(self.gs2_header + self.binding_data) + b",r=" + nonce
        auth_message = self.first_bare + b"," + server_first + b"," + without_proof
        signature = hmac.digest(stored_key, auth_message, self.hash_name)
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self.expected_server_final = b"v=" + base64.b64encode(hmac.digest(server_key, auth_message, self.hash_name))
        return without_proof + b",p=" + base64.b64encode(proof)

    def check_server_final(self, server_final):
        if server_final != self.expected_server_final:
            raise LoginError("server signature missing or wrong")


class Connection:
    """One client stream: a reader, a writer and what has been read so far."""

    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer
        self.buffer = b""

    async def expect(self, pattern):
        """Reads until `pattern` matches, consumes through the match and
        returns it; raises LoginError on a stream error, a SASL failure or
        the end of the connection. (Deadlines are the caller's.)"""
        while True:
            match = pattern.search(self.buffer)
            if match:
                self.buffer = self.buffer[match.end():]
                return match
            failure = FAILURE.search(self.buffer)
            if failure:
                raise LoginError(failure.group(0)[:200].decode(errors="replace"))
            chunk = await self.reader.read(READ_SIZE)
            if not chunk:
                raise LoginError("connection closed waiting for " + pattern.pattern.decode()[:40])
            self.buffer += chunk

    def send(self, text):
        self.writer.write(text.encode())

    async def open_stream(self, domain):
        """Sends a stream header and waits for the stream features."""
        self.send(STREAM_HEADER.format(domain=domain))
        return await self.expect(FEATURES_END)

    def abort(self):
        """Drops the connection at once (no closing handshake)."""
        self.writer.transport.abort()


class ResumingContext(ssl.SSLContext):
    """A client context that offers `session`, when set, for resumption:
    asyncio's start_tls has no session parameter, but makes its SSLObject
    with wrap_bio."""

    session = None

    def wrap_bio(self, incoming, outgoing, server_side=False, server_hostname=None, session=None):
        return super().wrap_bio(incoming, outgoing, server_side, server_hostname, session=session or self.session)

    @classmethod
    def like(cls, context):
        """A resuming context with `context`'s settings."""
        resuming = cls(ssl.PROTOCOL_TLS_CLIENT)
        resuming.check_hostname, resuming.verify_mode = context.check_hostname, context.verify_mode
        resuming.minimum_version = context.minimum_version
        return resuming

    def keep_session(self, conn):
        """Keeps the session of `conn` (with the newest ticket the server
        sent) for the next connection; returns whether `conn` resumed."""
        tls = conn.writer.get_extra_info("ssl_object")
        self.session = tls.session
        return tls.session_reused


class Target:
    """Where and how to log in: the server's address, domain, TLS or not,
    and whether to resume TLS sessions."""

    def __init__(self, host, port, domain, use_tls, timeout=20.0, resume=False):
        self.host, self.port, self.domain = host, port, domain
        self.use_tls = use_tls
        self.resume = resume
        self.timeout = timeout
        # Certificates are not verified (the same for all servers), and no
        # CA store is loaded: with OpenSSL 3 a context holding the system
        # store makes every client handshake markedly dearer. Unless
        # `resume` is set, each login is a full handshake.
        self.tls_context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.tls_context.check_hostname = False
        self.tls_context.verify_mode = ssl.CERT_NONE
        self.scram = SCRAMCache()
        self.tls_version = None
        self._resuming_contexts = []

    def resuming_contexts(self, count):
        """`count` ResumingContexts, kept from one batch of logins to the
        next so that each concurrent client goes on resuming its session."""
        while len(self._resuming_contexts) < count:
            self._resuming_contexts.append(ResumingContext.like(self.tls_context))
        return self._resuming_contexts[:count]


async def open_session(target, user, password, resource, tls_context=None):
    """Logs in up to a bound resource and returns the open Connection;
    STARTTLS uses `tls_context` if given, else the target's. Raises
    TimeoutError after `target.timeout` seconds."""
    async with asyncio.timeout(target.timeout):
        reader, writer = await asyncio.open_connection(target.host, target.port, limit=READ_SIZE)
        conn = Connection(reader, writer)
        try:
            await negotiate(conn, target, user, password, resource, tls_context)
        except BaseException:
            conn.abort()
            raise
    return conn


async def negotiate(conn, target, user, password, resource, tls_context=None):
    """Stream header to bound resource, on a connected `conn`."""
    if target.use_tls:
        await starttls(conn, target, tls_context)
    await conn.open_stream(target.domain)
    await authenticate(conn, target, user, password)
    await conn.open_stream(target.domain)
    conn.send(
        "<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>"
        f"<resource>{resource}</resource></bind></iq>")
    iq = (await conn.expect(IQ_END)).group(0)
    if b"type='result'" not in iq and b'type="result"' not in iq:
        raise LoginError("bind failed: " + iq[:200].decode(errors="replace"))


async def starttls(conn, target, context=None):
    """Stream header, STARTTLS (RFC 6120 §5) and the TLS handshake, with
    `context` if given, else the target's; the caller opens the stream
    again over TLS."""
    await conn.open_stream(target.domain)
    conn.send("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
    await conn.expect(PROCEED)
    await conn.writer.start_tls(context or target.tls_context, server_hostname=target.domain)
    target.tls_version = target.tls_version or conn.writer.get_extra_info("ssl_object").version()


async def authenticate(conn, target, user, password):
    """SASL SCRAM-SHA-1 without channel binding (gs2 header `n,,`)."""
    scram = SCRAMClient(target.scram, user, password)
    conn.send(
        f"<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='{MECHANISM}'>"
        + base64.b64encode(scram.client_first()).decode() + "</auth>")
    server_first = base64.b64decode((await conn.expect(CHALLENGE)).group(1))
    conn.send(
        "<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>"
        + base64.b64encode(scram.client_final(server_first)).decode() + "</response>")
    scram.check_server_final(base64.b64decode((await conn.expect(SUCCESS)).group(1) or b""))


async def login_once(target, user, password, resource, resuming=None):
    """One full login, ended by `close_stream`. With a ResumingContext
    `resuming`, offers its session and keeps the new one; returns whether
    the TLS session was resumed."""
    conn = await open_session(target, user, password, resource, resuming)
    resumed = resuming.keep_session(conn) if resuming else False
    await close_stream(conn, target.timeout)
    return resumed


async def close_stream(conn, timeout):
    """`</stream:stream>`, the server's reply to it (RFC 6120 §4.4) and
    closing the socket (after TLS close_notify); aborts on any error."""
    try:
        async with asyncio.timeout(timeout):
            conn.send("</stream:stream>")
            await conn.expect(STREAM_END)
            conn.writer.close()
            try:
                await conn.writer.wait_closed()
            except (ConnectionError, ssl.SSLError):
                pass  # the server may close before answering close_notify
    except BaseException:
        conn.abort()
        raise


class Outcome:
    """What a batch of logins or session openings produced."""

    def __init__(self):
        self.ok = 0
        self.resumed = 0
        self.latencies = []
        self.errors = {}

    def record_error(self, error):
        text = f"{type(error).__name__}: {error}"[:160]
        self.errors[text] = self.errors.get(text, 0) + 1

    def percentile(self, fraction):
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def run_logins(target, accounts, total, concurrency):
    """`total` logins from `concurrency` connections at a time, cycling
    through `accounts` [(user, password)]. With `target.resume`, each
    connection resumes the TLS session of its previous login. Returns an
    Outcome."""
    outcome = Outcome()
    next_index = iter(range(total))

    async def worker(resuming):
        for index in next_index:
            user, password = accounts[index % len(accounts)]
            started = time.perf_counter()
            try:
                resumed = await login_once(target, user, password, f"r{index}", resuming)
            except Exception as error:  # counted, whatever it is: the run goes on
                outcome.record_error(error)
                continue
            outcome.latencies.append(time.perf_counter() - started)
            outcome.ok += 1
            outcome.resumed += resumed

    contexts = target.resuming_contexts(concurrency) if target.resume else [None] * concurrency
    await asyncio.gather(*(worker(context) for context in contexts))
    return outcome


async def open_sessions(target, accounts, count, concurrency, first_index, sessions):
    """Opens `count` bound sessions (kept open, appended to `sessions`)."""
    outcome = Outcome()
    next_index = iter(range(first_index, first_index + count))

    async def worker():
        for index in next_index:
            user, password = accounts[index % len(accounts)]
            try:
                sessions.append(await open_session(target, user, password, f"idle{index}"))
            except Exception as error:  # counted, whatever it is: the run goes on
                outcome.record_error(error)
                continue
            outcome.ok += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return outcome


async def register_accounts(port, domain, accounts, streams=1, per_stream=None):
    """Creates the accounts [(user, password)] on the server at
    127.0.0.1:`port` by in-band registration (XEP-0077 §3.1), one after
    another on each of `streams` unauthenticated streams at a time, each
    stream closed after `per_stream` of them if given (a server may end an
    unauthenticated stream after a while); raises on the first refusal."""

    async def register_batch(batch):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        conn = Connection(reader, writer)
        try:
            await conn.open_stream(domain)
            for index, (user, password) in batch:
                conn.send(
                    f"<iq type='set' id='reg{index}'><query xmlns='jabber:iq:register'>"
                    f"<username>{user}</username><password>{password}</password></query></iq>")
                reply = (await conn.expect(IQ_END)).group(0)
                if b"type='result'" not in reply and b'type="result"' not in reply:
                    raise LoginError(f"registration of {user} failed: {reply[:300]!r}")
        finally:
            conn.abort()

    async def register_share(share):
        size = per_stream or len(share) or 1
        for start in range(0, len(share), size):
            await register_batch(share[start:start + size])

    numbered = list(enumerate(accounts))
    await asyncio.gather(*(register_share(numbered[first::streams]) for first in range(streams)))
