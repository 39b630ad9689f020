#!/usr/bin/env python3
"""Loopback stand-in for Apple's APNs HTTP/2 provider API, for tests.

It listens with TLS on 127.0.0.1 at an ephemeral port, offers only the
ALPN protocol `h2` (a connection that did not negotiate it is closed), and
prints one line `listening PORT` on stdout once it accepts connections.
Every request stream is checked the way APNs checks a token-authenticated
notification request:

  :method POST (else 405 MethodNotAllowed), :scheme https and :path
  /3/device/<TOKEN> (else 404 BadPath), TOKEN non-empty (else 400
  MissingDeviceToken) and hexadecimal (else 400 BadDeviceToken);
  authorization `bearer <JWT>` (absent: 403 MissingProviderToken), the JWT
  an ES256 provider token whose header names alg ES256 and the expected
  kid, whose claims have the expected iss and an integer iat no more than
  an hour old (else 403 ExpiredProviderToken) and no more than 60 s ahead,
  signed (raw r||s, as JOSE has it) by the key given with --provider-key
  (any other fault: 403 InvalidProviderToken);
  apns-id, when sent, a UUID (else 400 BadMessageId);
  apns-topic the expected topic (absent: 400 MissingTopic, else BadTopic;
  the type-specific suffixes such as `.voip` are accepted for their push
  type); apns-push-type a known type (else 400 InvalidPushType);
  apns-priority 5 or 10 (else 400 BadPriority); apns-collapse-id at most
  64 bytes (else 400 BadCollapseId); apns-expiration an integer (else 400
  BadExpirationDate);
  the body at most 4096 bytes (5120 for voip; else 413 PayloadTooLarge), a
  JSON object with an `aps` object (else 400 PayloadEmpty); a background
  push must carry `content-available: 1` and priority 5 (else 400
  BadPriority).

A request that passes is answered with the first --respond rule for its
token that still applies, or with 200. A rule TOKEN=STATUS:REASON*N applies
to the next N passing requests for TOKEN, one without *N to all of them;
rules for one token are used in the order given. Answers: 200 with an
apns-id header (the request's own, upper-cased, or a new UUID) and no
body; errors with content-type application/json, apns-id and a body
{"reason": ...} (410 also with "timestamp", milliseconds since the epoch).

Each request is appended to the --record file as one JSON line, written
before the answer is sent: path, headers (the authorization value left
out; jwt_valid, jwt_kid and jwt_iss added), payload (the parsed JSON, or
null), status, reason (null for 200), connection (a number given to each
accepted connection, from 1) and stream (the HTTP/2 stream id).

The tool ends by itself after --max-seconds (default 60), or on SIGTERM or
SIGINT, with exit status 0. Diagnostics go to stderr.

Needs the PyPI packages h2 and cryptography.

Usage: apns_standin.py --cert CERT.pem --key KEY.pem --provider-key KEY.p8
       --key-id KID --team-id TEAM --topic TOPIC --record FILE
       [--respond TOKEN=STATUS:REASON[*N] ...] [--max-seconds 60]
"""
import argparse
import asyncio
import base64
import binascii
import json
import re
import signal
import ssl
import sys
import time
import uuid

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

HOST = "127.0.0.1"
PUSH_TYPES = ("alert", "background", "voip", "complication", "fileprovider",
              "mdm", "liveactivity")
# Topic suffixes APNs expects for some push types; the bare topic is
# accepted for every type too.
TOPIC_SUFFIXES = {
    "voip": ".voip",
    "complication": ".complication",
    "fileprovider": ".pushkit.fileprovider",
    "liveactivity": ".push-type.liveactivity",
}
PAYLOAD_LIMIT = 4096
VOIP_PAYLOAD_LIMIT = 5120
# A token is accepted for an hour after its iat, and an iat this many
# seconds ahead of this clock is tolerated.
TOKEN_LIFETIME = 3600
CLOCK_SKEW = 60
# Body bytes kept per stream; beyond that only the length is counted.
BODY_KEEP = 64 * 1024
HANDSHAKE_TIMEOUT = 10
READ_SIZE = 65536
MAX_CONCURRENT_STREAMS = 1000

PATH_RE = re.compile(r"^/3/device/([^/]*)$")
HEX_RE = re.compile(r"^[0-9A-Fa-f]+$")
B64URL_RE = re.compile(r"^[A-Za-z0-9_-]+$")
UUID_RE = re.compile(
    r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-"
    r"[0-9A-Fa-f]{12}$")
INTEGER_RE = re.compile(r"^-?[0-9]+$")
RULE_RE = re.compile(r"^([^=]+)=([0-9]{3}):([^*]+?)(?:\*([0-9]+))?$")


def log(message):
    print(f"apns_standin: {message}", file=sys.stderr, flush=True)


class Rejected(Exception):
    """A request answered with an error: status and APNs reason."""

    def __init__(self, status, reason):
        super().__init__(f"{status} {reason}")
        self.status = status
        self.reason = reason


# ---------------------------------------------------------------- options

def parse_rule(text):
    """TOKEN=STATUS:REASON[*N] → (token, [status, reason, remaining])."""
    match = RULE_RE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"bad --respond {text!r}: expected TOKEN=STATUS:REASON[*N]")
    token, status, reason, count = match.groups()
    remaining = None if count is None else int(count)
    return token.strip().lower(), [int(status), reason, remaining]


def load_public_key(path):
    """The P-256 public key of a PEM (or DER) private key (PKCS#8 like
    Apple's .p8, or SEC1), public key or certificate."""
    with open(path, "rb") as handle:
        data = handle.read()
    key = None
    loaders = (
        lambda: serialization.load_pem_private_key(data, password=None),
        lambda: serialization.load_pem_public_key(data),
        lambda: x509.load_pem_x509_certificate(data).public_key(),
        lambda: serialization.load_der_private_key(data, password=None),
        lambda: serialization.load_der_public_key(data),
    )
    for loader in loaders:
        try:
            key = loader()
            break
        except Exception:  # noqa: BLE001 - try the next form
            continue
    if key is None:
        raise ValueError(f"{path}: no key or certificate could be read")
    if isinstance(key, ec.EllipticCurvePrivateKey):
        key = key.public_key()
    if not isinstance(key, ec.EllipticCurvePublicKey) or \
            not isinstance(key.curve, ec.SECP256R1):
        raise ValueError(f"{path}: not a P-256 (ES256) key")
    return key


# ------------------------------------------------------------- validation

def b64url_decode(part):
    """Strict unpadded base64url, as JWT uses it."""
    if not B64URL_RE.match(part) or len(part) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class JWTResult:
    def __init__(self):
        self.valid = False
        self.kid = None
        self.iss = None
        self.error = None  # (status, reason) when not valid


def check_jwt(authorization, opts):
    """Checks an authorization header value; returns a JWTResult."""
    result = JWTResult()
    if authorization is None or authorization.strip() == "":
        result.error = (403, "MissingProviderToken")
        return result
    result.error = (403, "InvalidProviderToken")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return result
    parts = token.strip().split(".")
    if len(parts) != 3:
        return result
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return result
    if isinstance(header, dict):
        kid = header.get("kid")
        result.kid = kid if isinstance(kid, str) else None
    if isinstance(claims, dict):
        iss = claims.get("iss")
        result.iss = iss if isinstance(iss, str) else None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return result
    if header.get("alg") != "ES256" or header.get("kid") != opts.key_id:
        return result
    if len(signature) != 64:
        return result
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    signing_input = f"{parts[0]}.{parts[1]}".encode("ascii")
    try:
        opts.public_key.verify(encode_dss_signature(r, s), signing_input,
                               ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return result
    if claims.get("iss") != opts.team_id:
        return result
    iat = claims.get("iat")
    if not isinstance(iat, int) or isinstance(iat, bool):
        return result
    now = time.time()
    if iat > now + CLOCK_SKEW:
        return result
    if iat < now - TOKEN_LIFETIME:
        result.error = (403, "ExpiredProviderToken")
        return result
    result.valid = True
    result.error = None
    return result


def check_request(headers, body, body_length, opts, jwt):
    """Raises Rejected for the first fault APNs would report, in the order
    checked here; returns the device token (lower-cased) otherwise."""
    if headers.get(":method") != "POST":
        raise Rejected(405, "MethodNotAllowed")
    if headers.get(":scheme") != "https":
        raise Rejected(404, "BadPath")
    match = PATH_RE.match(headers.get(":path", ""))
    if not match:
        raise Rejected(404, "BadPath")
    token = match.group(1)
    if token == "":
        raise Rejected(400, "MissingDeviceToken")
    if not HEX_RE.match(token):
        raise Rejected(400, "BadDeviceToken")
    if jwt.error is not None:
        raise Rejected(*jwt.error)
    apns_id = headers.get("apns-id")
    if apns_id is not None and not UUID_RE.match(apns_id):
        raise Rejected(400, "BadMessageId")
    push_type = headers.get("apns-push-type")
    topic = headers.get("apns-topic")
    if topic is None or topic == "":
        raise Rejected(400, "MissingTopic")
    allowed_topics = {opts.topic}
    if push_type in TOPIC_SUFFIXES:
        allowed_topics.add(opts.topic + TOPIC_SUFFIXES[push_type])
    if topic not in allowed_topics:
        raise Rejected(400, "BadTopic")
    if push_type not in PUSH_TYPES:
        raise Rejected(400, "InvalidPushType")
    priority = headers.get("apns-priority")
    if priority is not None and priority not in ("5", "10"):
        raise Rejected(400, "BadPriority")
    collapse_id = headers.get("apns-collapse-id")
    if collapse_id is not None and len(collapse_id.encode("utf-8")) > 64:
        raise Rejected(400, "BadCollapseId")
    expiration = headers.get("apns-expiration")
    if expiration is not None and not INTEGER_RE.match(expiration):
        raise Rejected(400, "BadExpirationDate")
    limit = VOIP_PAYLOAD_LIMIT if push_type == "voip" else PAYLOAD_LIMIT
    if body_length > limit:
        raise Rejected(413, "PayloadTooLarge")
    payload = parse_payload(body, body_length)
    if not isinstance(payload, dict) or not isinstance(payload.get("aps"), dict):
        raise Rejected(400, "PayloadEmpty")
    if push_type == "background":
        available = payload["aps"].get("content-available")
        if available != 1 or isinstance(available, bool) or priority != "5":
            raise Rejected(400, "BadPriority")
    return token.lower()


def parse_payload(body, body_length):
    """The body as JSON, or None (empty, too long to keep, not JSON)."""
    if body_length == 0 or body_length > len(body):
        return None
    try:
        return json.loads(bytes(body).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


# ----------------------------------------------------------------- server

class StandIn:
    def __init__(self, opts):
        self.opts = opts
        self.rules = {}
        for token, rule in opts.respond:
            self.rules.setdefault(token, []).append(rule)
        self.connection_count = 0
        self.writers = {}  # open connection's writer → its H2Connection
        self.record = open(opts.record, "a", encoding="utf-8")

    def next_rule(self, token):
        """The (status, reason) of the first applicable rule, consuming one
        use of a counted rule; None when no rule applies."""
        for rule in self.rules.get(token, ()):
            status, reason, remaining = rule
            if remaining is None:
                return status, reason
            if remaining > 0:
                rule[2] = remaining - 1
                return status, reason
        return None

    def write_record(self, entry):
        try:
            self.record.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self.record.flush()
        except (OSError, ValueError) as error:
            log(f"cannot write record: {error}")

    def answer(self, connection_id, stream_id, raw_headers, body, body_length):
        """Checks one complete request, records it; returns the response
        headers and body."""
        headers = {}
        for name, value in raw_headers:
            name = name.decode("utf-8", "replace")
            value = value.decode("utf-8", "replace")
            headers[name] = f"{headers[name]},{value}" if name in headers \
                else value
        jwt = check_jwt(headers.get("authorization"), self.opts)
        payload = parse_payload(body, body_length)
        try:
            token = check_request(headers, body, body_length,
                                           self.opts, jwt)
            rule = self.next_rule(token)
            status, reason = rule if rule is not None else (200, None)
        except Rejected as rejected:
            status, reason = rejected.status, rejected.reason
        except Exception as error:  # noqa: BLE001 - a bug here: answer 500
            log(f"internal error: {error!r}")
            status, reason = 500, "InternalServerError"
        if status == 200:
            reason = None

        recorded = {k: v for k, v in headers.items() if k != "authorization"}
        recorded["jwt_valid"] = jwt.valid
        recorded["jwt_kid"] = jwt.kid
        recorded["jwt_iss"] = jwt.iss
        self.write_record({
            "path": headers.get(":path"),
            "headers": recorded,
            "payload": payload,
            "status": status,
            "reason": reason,
            "connection": connection_id,
            "stream": stream_id,
        })

        apns_id = headers.get("apns-id")
        if apns_id is None or not UUID_RE.match(apns_id):
            apns_id = str(uuid.uuid4())
        response = [(":status", str(status)), ("apns-id", apns_id.upper())]
        if status == 200:
            return response, b""
        content = {"reason": reason}
        if status == 410:
            content["timestamp"] = int(time.time() * 1000)
        data = json.dumps(content).encode("utf-8")
        response += [("content-type", "application/json"),
                     ("content-length", str(len(data)))]
        return response, data

    async def serve_connection(self, reader, writer):
        self.connection_count += 1
        connection_id = self.connection_count
        self.writers[writer] = None
        try:
            ssl_object = writer.get_extra_info("ssl_object")
            if ssl_object is None or ssl_object.selected_alpn_protocol() != "h2":
                log(f"connection {connection_id}: no h2 negotiated, closed")
                return
            await self.speak_h2(connection_id, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError,
                OSError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - never die for a client
            log(f"connection {connection_id}: {error!r}")
        finally:
            self.writers.pop(writer, None)
            writer.close()
            try:
                await asyncio.wait_for(writer.wait_closed(), 2)
            except Exception:  # noqa: BLE001
                pass

    async def speak_h2(self, connection_id, reader, writer):
        config = h2.config.H2Configuration(client_side=False,
                                           header_encoding=None)
        conn = h2.connection.H2Connection(config=config)
        conn.local_settings = h2.settings.Settings(
            client=False,
            initial_values={
                h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS:
                    MAX_CONCURRENT_STREAMS,
                h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: 65536,
            })
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        await writer.drain()
        self.writers[writer] = conn  # for the GOAWAY at shutdown
        streams = {}   # stream id → [headers, body bytearray, body length]
        pending = {}   # stream id → response data waiting for the window

        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                return
            try:
                events = conn.receive_data(data)
            except h2.exceptions.ProtocolError as error:
                log(f"connection {connection_id}: protocol error: {error}")
                writer.write(conn.data_to_send())
                await writer.drain()
                return
            for event in events:
                if isinstance(event, h2.events.RequestReceived):
                    streams[event.stream_id] = [event.headers, bytearray(), 0]
                elif isinstance(event, h2.events.DataReceived):
                    state = streams.get(event.stream_id)
                    if state is not None:
                        room = BODY_KEEP - len(state[1])
                        if room > 0:
                            state[1] += event.data[:room]
                        state[2] += len(event.data)
                    if event.flow_controlled_length:
                        try:
                            conn.acknowledge_received_data(
                                event.flow_controlled_length, event.stream_id)
                        except h2.exceptions.ProtocolError:
                            pass
                elif isinstance(event, h2.events.StreamEnded):
                    state = streams.pop(event.stream_id, None)
                    if state is None:
                        continue
                    headers, body = self.answer(connection_id,
                                                event.stream_id, *state)
                    self.respond(conn, event.stream_id, headers, body,
                                 pending)
                elif isinstance(event, h2.events.StreamReset):
                    streams.pop(event.stream_id, None)
                    pending.pop(event.stream_id, None)
                elif isinstance(event, (h2.events.WindowUpdated,
                                        h2.events.RemoteSettingsChanged)):
                    self.flush_pending(conn, pending)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    writer.write(conn.data_to_send())
                    await writer.drain()
                    return
            outgoing = conn.data_to_send()
            if outgoing:
                writer.write(outgoing)
                await writer.drain()

    def respond(self, conn, stream_id, headers, body, pending):
        try:
            conn.send_headers(stream_id, headers, end_stream=not body)
        except h2.exceptions.ProtocolError:
            return  # the client reset or closed the stream
        if body:
            pending[stream_id] = body
            self.flush_pending(conn, pending)

    @staticmethod
    def flush_pending(conn, pending):
        for stream_id in list(pending):
            data = pending[stream_id]
            try:
                window = min(conn.local_flow_control_window(stream_id),
                             conn.max_outbound_frame_size)
                if window <= 0:
                    continue
                chunk, rest = data[:window], data[window:]
                conn.send_data(stream_id, chunk, end_stream=not rest)
            except h2.exceptions.ProtocolError:
                pending.pop(stream_id, None)
                continue
            if rest:
                pending[stream_id] = rest
            else:
                pending.pop(stream_id, None)

    async def shutdown_connections(self):
        """GOAWAY and close every open connection; whatever has not closed
        a moment later is cut."""
        for writer, conn in list(self.writers.items()):
            try:
                if conn is not None:
                    conn.close_connection()
                    writer.write(conn.data_to_send())
                writer.close()
            except Exception:  # noqa: BLE001
                pass
        if self.writers:
            await asyncio.sleep(0.2)
        for writer in list(self.writers):
            try:
                writer.transport.abort()
            except Exception:  # noqa: BLE001
                pass


def quiet_exception_handler(loop, context):
    """Failed TLS handshakes and the like are a client's problem: one line
    on stderr instead of a traceback."""
    error = context.get("exception")
    if isinstance(error, asyncio.CancelledError):
        return
    log(f"{context.get('message')}: {error!r}" if error else
        str(context.get("message")))


async def run(opts):
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(quiet_exception_handler)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(opts.cert, opts.key)
    context.set_alpn_protocols(["h2"])

    standin = StandIn(opts)
    server = await asyncio.start_server(
        standin.serve_connection, HOST, 0, ssl=context,
        ssl_handshake_timeout=HANDSHAKE_TIMEOUT)
    port = server.sockets[0].getsockname()[1]
    print(f"listening {port}", flush=True)
    try:
        await asyncio.wait_for(stop.wait(), timeout=opts.max_seconds)
    except asyncio.TimeoutError:
        log(f"--max-seconds {opts.max_seconds:g} elapsed, ending")
    server.close()
    await standin.shutdown_connections()
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=1)
    standin.record.close()


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Loopback stand-in for the APNs HTTP/2 provider API.")
    parser.add_argument("--cert", required=True,
                        help="TLS certificate chain (PEM) for 127.0.0.1")
    parser.add_argument("--key", required=True,
                        help="private key (PEM) of --cert")
    parser.add_argument("--provider-key", required=True,
                        help="the ES256 provider key: .p8 private key or "
                             "public key PEM")
    parser.add_argument("--key-id", required=True, help="expected JWT kid")
    parser.add_argument("--team-id", required=True, help="expected JWT iss")
    parser.add_argument("--topic", required=True,
                        help="expected apns-topic (the bundle id)")
    parser.add_argument("--record", required=True,
                        help="file each request is appended to (JSON lines)")
    parser.add_argument("--respond", action="append", type=parse_rule,
                        default=[], metavar="TOKEN=STATUS:REASON[*N]",
                        help="answer for a device token (repeatable)")
    parser.add_argument("--max-seconds", type=float, default=60.0,
                        help="end after this many seconds (default 60)")
    opts = parser.parse_args(argv)
    if opts.max_seconds <= 0:
        parser.error("--max-seconds must be positive")
    try:
        opts.public_key = load_public_key(opts.provider_key)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    try:
        asyncio.run(run(opts))
    except (OSError, ssl.SSLError) as error:
        log(f"cannot serve: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
