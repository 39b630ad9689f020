#!/usr/bin/env python3
"""Reconnects: swiftletd, Prosody and ejabberd on this machine, in one run.

A reconnect is what a mobile client does many times a day: TCP connect,
STARTTLS, a full TLS handshake (no session resumption), authenticate, get
a bound resource with stream management (XEP-0198, resume='true') and
message carbons (XEP-0280) enabled, then `</stream:stream>` and close.
It is measured in these modes:

  tls     the common part only: STARTTLS, TLS handshake, the stream header
          over TLS and its features, then close (the baseline the others
          are compared beyond)
  legacy  RFC 6120: SASL SCRAM (SCRAM-SHA-256 where offered, else
          SCRAM-SHA-1), stream restart, resource binding, SM <enable/>,
          carbons IQ
  sasl2   XEP-0388 SASL2 with SCRAM-SHA-256-PLUS (tls-server-end-point,
          RFC 5929 §4.1; SCRAM-SHA-256 if -PLUS is not offered) and Bind 2
          (XEP-0386) enabling carbons and SM inline: no stream restart
  fast    SASL2 with a XEP-0484 FAST token (HT-SHA-256-NONE, or -ENDP with
          --fast-mechanism), the token got by one sasl2 login per account
          with <request-token/> before the batch, and Bind 2 inline
  fast-resumed
          fast over a resumed TLS session (RFC 8446 §2.2: the session
          ticket of the account's previous connection), as a phone that
          reconnects does: no certificate, no signature

Prosody 0.12 and ejabberd 23.01 have no SASL2: they get the tls and legacy
modes only. Servers and rounds are interleaved (round 1: swiftletd, Prosody,
ejabberd; round 2: …), each round on freshly started processes; medians
over the rounds are reported.

Per mode: reconnects/s, the server's CPU time per reconnect (utime + stime
of the server process from /proc/PID/stat over the batch, which includes
the TLS handshake and the close), the same beyond the tls mode's, p50/p99
of the time from TCP connect to a usable session, and the round trips:
how many times the client waited for the server's answer to something it
had sent, before TLS (stream header, STARTTLS; the TLS 1.3 handshake's own
round trip comes on top) and after it, until the session was usable.

By default the client pipelines as a client that knows the server from an
earlier connection does (XEP-0305): the stream header after TLS goes out
with the first authentication element, and in legacy mode the restart
header goes with the bind, SM and carbons requests. --no-pipeline waits
for each answer in turn.

Usage: reconnect.py --swiftletd PATH [options]   (see --help)
"""
import argparse
import asyncio
import base64
import hashlib
import hmac
import os
import re
import ssl
import statistics
import time
import uuid

import benchmark
import ejabberd
import routing
import servers
import xmpp_load

SERVER_NAMES = ("swiftletd", "prosody", "ejabberd")
MODES = ("tls", "legacy", "sasl2", "fast", "fast-resumed")
SASL2_MODES = ("sasl2", "fast", "fast-resumed")
FAST_MODES = ("fast", "fast-resumed")
PASSWORD = routing.PASSWORD
SASL2 = "urn:xmpp:sasl:2"
#: TLS 1.3: one round trip for the handshake (ClientHello to Finished).
TLS13_ROUND_TRIPS = 1

FEATURES = re.compile(rb"<(?:stream:)?features\b[^>]*/>|<(?:stream:)?features\b.*?</(?:stream:)?features>", re.S)
MECHANISM = re.compile(rb"<mechanism>([^<]+)</mechanism>")
SASL2_FEATURE = re.compile(rb"<authentication\b[^>]*urn:xmpp:sasl:2.*?</authentication>", re.S)
FAST_FEATURE = re.compile(rb"<fast\b[^>]*urn:xmpp:fast:0.*?</fast>", re.S)
CHANNEL_BINDING = re.compile(rb"<channel-binding\b[^>]*type=['\"]([^'\"]+)['\"]")
SASL2_CHALLENGE = re.compile(rb"<challenge\b[^>]*>([^<]*)</challenge>")
SASL2_SUCCESS = re.compile(rb"<success\b[^>]*>(.*?)</success>", re.S)
ADDITIONAL_DATA = re.compile(rb"<additional-data>([^<]*)</additional-data>")
TOKEN = re.compile(rb"<token\b[^>]*\btoken=['\"]([^'\"]+)['\"]")
SM_ANSWER = re.compile(rb"<(enabled|failed)\b[^>]*?(?:/>|>.*?</\1>)", re.S)


def iq_result(identifier):
    """The answer to the IQ with this id, whatever its type."""
    return re.compile(rb"<iq\b[^>]*\bid=['\"]" + identifier.encode() + rb"['\"].*?(?:/>|</iq>)", re.S)


BIND_RESULT, CARBONS_RESULT = iq_result("bind1"), iq_result("carbons1")


def parse_arguments():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\nUsage")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    routing.add_server_arguments(parser, SERVER_NAMES, SERVER_NAMES)
    parser.add_argument("--modes", default=",".join(MODES), help=f"modes, of: {', '.join(MODES)} (see above)")
    parser.add_argument("--accounts", type=int, default=50, help="accounts the reconnects cycle through")
    parser.add_argument("--reconnects", type=int, default=2000, help="measured reconnects per server and mode")
    parser.add_argument("--warmup", type=int, default=200, help="reconnects before each measurement")
    parser.add_argument("--concurrency", type=int, default=4, help="concurrent client connections")
    parser.add_argument("--fast-mechanism", default="HT-SHA-256-NONE",
                        choices=("HT-SHA-256-NONE", "HT-SHA-256-ENDP"), help="FAST's mechanism")
    parser.add_argument("--no-pipeline", dest="pipeline", action="store_false",
                        help="wait for every answer before sending the next request")
    parser.add_argument("--phase-timeout", type=float, default=240, help="seconds allowed per batch")
    routing.add_run_arguments(parser)
    arguments = parser.parse_args()
    routing.check_common_arguments(parser, arguments, SERVER_NAMES)
    arguments.mode_names = arguments.modes.split(",")
    if set(arguments.mode_names) - set(MODES):
        parser.error(f"unknown modes: {', '.join(sorted(set(arguments.mode_names) - set(MODES)))}")
    if arguments.accounts < arguments.concurrency:
        parser.error("--accounts must be at least --concurrency (an account reconnects on one connection at a time)")
    return arguments


class ReconnectProsody(servers.Prosody):
    """Prosody as in servers.py plus mod_carbons and mod_smacks (both
    shipped with 0.12)."""

    modules = servers.Prosody.modules + ("carbons", "smacks")


class ReconnectEjabberd(ejabberd.TLSEjabberd):
    """ejabberd as in ejabberd.py with STARTTLS offered (a self-signed
    ECDSA P-256 certificate, as the others), mod_carboncopy and
    mod_stream_mgmt (their defaults), and the Erlang VM's schedulers not
    busy-waiting when idle."""

    def __init__(self, directory):
        super().__init__(directory)
        # No busy-waiting of idle schedulers: the VM's CPU time then counts
        # work rather than spinning between the reconnects.
        with open(os.path.join(directory, "ejabberdctl.cfg"), "a") as config:
            config.write('ERL_OPTIONS="$ERL_OPTIONS +sbwt none +sbwtdcpu none +sbwtdio none"\n')
        with open(os.path.join(directory, "ejabberd.yml"), "a") as config:
            config.write("  mod_carboncopy: {}\n  mod_stream_mgmt: {}\n")


def make_server(name, directory, arguments, report):
    if name == "swiftletd":
        return servers.Swiftletd(directory, arguments.swiftletd)
    if name == "prosody":
        return ReconnectProsody(directory)
    if ejabberd.available():
        return ReconnectEjabberd(directory)
    report["skipped"].append("ejabberd (not installed: apt-get install ejabberd)")
    benchmark.log("ejabberd is not installed; skipped")
    return None


class CountingConnection(xmpp_load.Connection):
    """A Connection that counts round trips: a wait for the server that
    follows something sent since the last wait."""

    def __init__(self, reader, writer):
        super().__init__(reader, writer)
        self.round_trips = 0
        self.sent_since_wait = False

    def send(self, text):
        super().send(text)
        self.sent_since_wait = True

    async def expect(self, pattern):
        if self.sent_since_wait:
            self.round_trips += 1
            self.sent_since_wait = False
        return await super().expect(pattern)


class ServerFeatures:
    """What one server offers after TLS, read once per round by a probe
    connection: the client's knowledge of the server that lets it pipeline."""

    def __init__(self, features):
        sasl2 = SASL2_FEATURE.search(features)
        sasl2 = sasl2.group(0) if sasl2 else b""
        fast = FAST_FEATURE.search(sasl2)
        fast = fast.group(0) if fast else b""
        mechanisms = lambda text: [name.decode() for name in MECHANISM.findall(text)]
        self.legacy_mechanisms = mechanisms(features.replace(sasl2, b"") if sasl2 else features)
        self.sasl2_mechanisms = mechanisms(sasl2.replace(fast, b"") if fast else sasl2)
        self.fast_mechanisms = mechanisms(fast)
        self.channel_bindings = [name.decode() for name in CHANNEL_BINDING.findall(features)]

    def legacy_mechanism(self):
        for name in ("SCRAM-SHA-256", "SCRAM-SHA-1"):
            if name in self.legacy_mechanisms:
                return name
        raise xmpp_load.LoginError(f"no SCRAM mechanism offered: {self.legacy_mechanisms}")

    def sasl2_mechanism(self):
        if "SCRAM-SHA-256-PLUS" in self.sasl2_mechanisms and "tls-server-end-point" in self.channel_bindings:
            return "SCRAM-SHA-256-PLUS"
        if "SCRAM-SHA-256" in self.sasl2_mechanisms:
            return "SCRAM-SHA-256"
        raise xmpp_load.LoginError(f"no SASL2 SCRAM-SHA-256 offered: {self.sasl2_mechanisms}")


class Account:
    """An account, its FAST state (one user agent id per account, as one
    device) and a lock: an account reconnects on one connection at a time."""

    def __init__(self, user, tls_context):
        self.user = user
        self.user_agent = str(uuid.uuid4())
        self.token = None
        self.lock = asyncio.Lock()
        #: Resumes the account's last TLS session (fast-resumed mode).
        self.tls_context = tls_context


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


class Reconnector:
    """The client for one server, mode and round."""

    def __init__(self, target, features, mode, arguments):
        self.target, self.mode = target, mode
        self.pipeline = arguments.pipeline
        self.fast_mechanism = arguments.fast_mechanism
        self.mechanism = None
        if mode == "legacy":
            self.mechanism = features.legacy_mechanism()
        elif mode == "sasl2":
            self.mechanism = features.sasl2_mechanism()
        elif mode in FAST_MODES:
            if self.fast_mechanism not in features.fast_mechanisms:
                raise xmpp_load.LoginError(f"{self.fast_mechanism} not offered: {features.fast_mechanisms}")
            self.mechanism = self.fast_mechanism

    async def reconnect(self, account, request_token=False):
        """One reconnect; returns (seconds to a usable session, seconds to
        the end of the close, round trips before TLS, round trips after
        TLS)."""
        started = time.perf_counter()
        async with asyncio.timeout(self.target.timeout):
            reader, writer = await asyncio.open_connection(
                self.target.host, self.target.port, limit=xmpp_load.READ_SIZE)
            conn = CountingConnection(reader, writer)
            resuming = self.mode == "fast-resumed"
            try:
                await xmpp_load.starttls(conn, self.target, account.tls_context if resuming else None)
                before_tls, conn.round_trips = conn.round_trips, 0
                header = xmpp_load.STREAM_HEADER.format(domain=self.target.domain)
                if self.mode == "tls":
                    conn.send(header)
                    await conn.expect(FEATURES)
                elif self.mode == "legacy":
                    await self.legacy(conn, account, header)
                else:
                    await self.sasl2(conn, account, header, request_token)
            except BaseException:
                conn.abort()
                raise
        usable, after_tls = time.perf_counter() - started, conn.round_trips
        if resuming:
            tls = conn.writer.get_extra_info("ssl_object")
            if account.tls_context.session is not None and not tls.session_reused:
                raise xmpp_load.LoginError("the TLS session was not resumed")
            account.tls_context.session = tls.session  # the newest ticket, for the next reconnect
        await xmpp_load.close_stream(conn, self.target.timeout)
        return usable, time.perf_counter() - started, before_tls, after_tls

    async def open_and_send(self, conn, header, first):
        """The stream header over TLS and the first authentication element:
        together when pipelining, else the second after the features."""
        conn.send(header)
        if not self.pipeline:
            await conn.expect(FEATURES)
        conn.send(first)
        if self.pipeline:
            await conn.expect(FEATURES)

    def binding(self, conn):
        """(type, data) of tls-server-end-point: SHA-256 of the server's
        certificate (RFC 5929 §4.1; the certificates here are signed with
        SHA-256)."""
        der = conn.writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        return "tls-server-end-point", hashlib.sha256(der).digest()

    async def legacy(self, conn, account, header):
        scram = xmpp_load.SCRAMClient(
            self.target.scram, account.user, PASSWORD, "sha256" if "256" in self.mechanism else "sha1")
        await self.open_and_send(conn, header, (
            f"<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='{self.mechanism}'>"
            + base64.b64encode(scram.client_first()).decode() + "</auth>"))
        server_first = base64.b64decode((await conn.expect(xmpp_load.CHALLENGE)).group(1))
        conn.send(
            "<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>"
            + base64.b64encode(scram.client_final(server_first)).decode() + "</response>")
        scram.check_server_final(base64.b64decode((await conn.expect(xmpp_load.SUCCESS)).group(1) or b""))
        requests = [
            ("<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>"
             "<resource>bench</resource></bind></iq>", BIND_RESULT),
            ("<enable xmlns='urn:xmpp:sm:3' resume='true'/>", SM_ANSWER),
            ("<iq type='set' id='carbons1'><enable xmlns='urn:xmpp:carbons:2'/></iq>", CARBONS_RESULT),
        ]
        conn.send(header)
        if not self.pipeline:
            await conn.expect(FEATURES)
        answers = []
        for request, answer in requests:
            conn.send(request)
            if not self.pipeline:
                answers.append((await conn.expect(answer)).group(0))
        if self.pipeline:
            await conn.expect(FEATURES)
            answers = [(await conn.expect(answer)).group(0) for _, answer in requests]
        bind, sm, carbons = answers
        for name, answer in (("bind", bind), ("carbons", carbons)):
            if b"type='result'" not in answer and b'type="result"' not in answer:
                raise xmpp_load.LoginError(f"{name} failed: " + answer[:200].decode(errors="replace"))
        if not sm.startswith(b"<enabled"):
            raise xmpp_load.LoginError("SM enable failed: " + sm[:200].decode(errors="replace"))

    async def sasl2(self, conn, account, header, request_token):
        """SASL2 <authenticate> with Bind 2 inline: SCRAM (challenge and
        response) or a FAST token (no challenge)."""
        fast = self.mode in FAST_MODES
        binding = None
        if fast:
            cb = self.binding(conn)[1] if self.mechanism.endswith("-ENDP") else b""
            initial = account.user.encode() + b"\0" + hmac.digest(
                account.token.encode(), b"Initiator" + cb, "sha256")
        else:
            binding = self.binding(conn) if self.mechanism.endswith("-PLUS") else None
            scram = xmpp_load.SCRAMClient(self.target.scram, account.user, PASSWORD, "sha256", binding)
            initial = scram.client_first()
        extra = "<fast xmlns='urn:xmpp:fast:0'/>" if fast else ""
        if request_token:
            extra += f"<request-token xmlns='urn:xmpp:fast:0' mechanism='{self.fast_mechanism}'/>"
        await self.open_and_send(conn, header, (
            f"<authenticate xmlns='{SASL2}' mechanism='{self.mechanism}'>"
            f"<initial-response>{base64.b64encode(initial).decode()}</initial-response>"
            f"<user-agent id='{account.user_agent}'><software>bench</software></user-agent>"
            "<bind xmlns='urn:xmpp:bind:0'><tag>bench</tag><enable xmlns='urn:xmpp:carbons:2'/>"
            "<enable xmlns='urn:xmpp:sm:3' resume='true'/></bind>"
            f"{extra}</authenticate>"))
        if not fast:
            server_first = base64.b64decode((await conn.expect(SASL2_CHALLENGE)).group(1))
            conn.send(f"<response xmlns='{SASL2}'>"
                      + base64.b64encode(scram.client_final(server_first)).decode() + "</response>")
        success = (await conn.expect(SASL2_SUCCESS)).group(1)
        await conn.expect(FEATURES)  # <stream:features/> after success, no restart
        data = ADDITIONAL_DATA.search(success)
        server_final = base64.b64decode(data.group(1)) if data else b""
        if fast:
            if server_final != hmac.digest(account.token.encode(), b"Responder" + cb, "sha256"):
                raise xmpp_load.LoginError("FAST: the server's hashed token is missing or wrong")
        else:
            scram.check_server_final(server_final)
        if b"<bound" not in success or b"<enabled" not in success:
            raise xmpp_load.LoginError("no Bind 2 <bound/> with SM <enabled/>: " + success[:300].decode(errors="replace"))
        token = TOKEN.search(success)
        if token:  # issued on request, or rotated by the server
            account.token = token.group(1).decode()
        elif request_token:
            raise xmpp_load.LoginError("no FAST token in the success")


async def run_batch(reconnector, accounts, total, concurrency, request_token=False):
    """`total` reconnects from `concurrency` connections at a time, cycling
    through `accounts`. Returns an Outcome with round trips."""
    outcome = xmpp_load.Outcome()
    outcome.round_trips, outcome.totals = set(), []
    next_index = iter(range(total))

    async def worker():
        for index in next_index:
            account = accounts[index % len(accounts)]
            async with account.lock:
                try:
                    usable, total, before, after = await reconnector.reconnect(account, request_token)
                except Exception as error:  # counted, whatever it is: the run goes on
                    outcome.record_error(error)
                    continue
            outcome.latencies.append(usable)
            outcome.totals.append(total)
            outcome.round_trips.add((before, after))
            outcome.ok += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return outcome


async def probe(target):
    """The features after TLS, from one connection that logs in no one."""
    reader, writer = await asyncio.open_connection(target.host, target.port, limit=xmpp_load.READ_SIZE)
    conn = xmpp_load.Connection(reader, writer)
    try:
        async with asyncio.timeout(target.timeout):
            await xmpp_load.starttls(conn, target)
            conn.send(xmpp_load.STREAM_HEADER.format(domain=target.domain))
            features = (await conn.expect(FEATURES)).group(0)
    finally:
        conn.abort()
    return ServerFeatures(features)


async def measure_mode(server, target, features, mode, accounts, arguments):
    reconnector = Reconnector(target, features, mode, arguments)
    if mode in FAST_MODES:
        tokens = Reconnector(target, features, "sasl2", arguments)
        outcome = await run_batch(tokens, accounts, len(accounts), arguments.concurrency, request_token=True)
        if outcome.errors:
            raise RuntimeError(f"{server.name}: getting FAST tokens failed: {benchmark.summarize_errors(outcome)}")
    await run_batch(reconnector, accounts, arguments.warmup, arguments.concurrency)
    server_cpu, client_cpu, started = server.cpu_seconds(), benchmark.client_cpu_seconds(), time.perf_counter()
    threads_before = server.thread_cpu_seconds()
    outcome = await run_batch(reconnector, accounts, arguments.reconnects, arguments.concurrency)
    wall = time.perf_counter() - started
    server_cpu = server.cpu_seconds() - server_cpu
    threads = routing.split_thread_cpu(threads_before, server.thread_cpu_seconds())
    client_cpu = benchmark.client_cpu_seconds() - client_cpu
    trips = sorted(outcome.round_trips)
    return {
        "server": server.name, "mode": mode, "mechanism": reconnector.mechanism or "-",
        "tls_version": target.tls_version, "reconnects": outcome.ok, "failed": sum(outcome.errors.values()),
        "errors": benchmark.summarize_errors(outcome), "wall_s": wall,
        "reconnects_per_s": outcome.ok / wall, "server_cpu_s": server_cpu,
        "server_cpu_us": server_cpu / outcome.ok * 1e6 if outcome.ok else None,
        "loop_cpu_us": threads["loop"] / outcome.ok * 1e6 if outcome.ok else None,
        "other_threads_cpu_us": threads["other"] / outcome.ok * 1e6 if outcome.ok else None,
        "client_cpu_share": client_cpu / wall,
        "p50_ms": outcome.percentile(0.50) * 1000, "p99_ms": outcome.percentile(0.99) * 1000,
        "p50_closed_ms": routing.percentile(sorted(outcome.totals), 0.50) * 1000,
        # Every reconnect of a mode takes the same path: one pair expected.
        "round_trips_before_tls": trips[0][0] if trips else None,
        "round_trips_after_tls": trips[0][1] if trips else None,
        "round_trips_seen": trips,
    }


async def measure_server(server, arguments, round_number, report):
    """One round on a fresh process: each mode the server supports."""
    target = xmpp_load.Target("127.0.0.1", server.port, servers.DOMAIN, True)
    target.tls_context.minimum_version = ssl.TLSVersion.TLSv1_3
    accounts = [Account(f"bench{i}", ResumingContext.like(target.tls_context)) for i in range(arguments.accounts)]
    server.start()
    try:
        features = await probe(target)
        report["features"][server.name] = vars(features)
        for mode in arguments.mode_names:
            if mode in SASL2_MODES and not features.sasl2_mechanisms:
                continue  # no SASL2 on this server
            benchmark.log(f"round {round_number}: {server.name}, {mode}")
            result = await benchmark.with_deadline(
                measure_mode(server, target, features, mode, accounts, arguments),
                arguments.phase_timeout, f"{server.name} {mode}")
            report["reconnects"].append(dict(result, round=round_number))
    finally:
        await asyncio.sleep(0.5)  # let the server see the last disconnects
        server.stop()


async def run(arguments, workdir, report, started):
    """Accounts, then the rounds; fills `report`. Servers are appended to
    `started` as soon as they exist, for the caller to stop."""
    report["features"] = {}
    users = [f"bench{i}" for i in range(arguments.accounts)]
    chosen = await routing.prepare_servers(arguments, workdir, report, started, make_server, users)
    for round_number in range(1, arguments.rounds + 1):
        for server in chosen:
            await measure_server(server, arguments, round_number, report)


def medians(report):
    """{(server, mode): medians over the rounds, with the mechanism and
    round trips of the first round}."""
    table = {}
    for row in report["reconnects"]:
        table.setdefault((row["server"], row["mode"]), []).append(row)
    return {key: dict(rows[0], **{name: routing.median_of(rows, name) for name in (
        "reconnects_per_s", "server_cpu_us", "client_cpu_share", "p50_ms", "p99_ms", "p50_closed_ms",
        "loop_cpu_us", "other_threads_cpu_us")},
        failed=sum(r["failed"] for r in rows), rounds=len(rows),
        rates=[r["reconnects_per_s"] for r in rows]) for key, rows in table.items()}


def format_tables(report, arguments):
    """Medians per server and mode as Markdown, then the goal's ratios."""
    names = [name for name in SERVER_NAMES if name in report["versions"]]
    table = medians(report)
    tls = next((row["tls_version"] for row in table.values() if row["tls_version"]), "TLS")
    lines = routing.report_header(report, names, arguments, (
        f"STARTTLS ({tls}, full handshake, certificates not verified); {arguments.reconnects} reconnects per "
        f"cell after {arguments.warmup} warm-up, {arguments.accounts} accounts, {arguments.concurrency} concurrent "
        f"connections; {'pipelined' if arguments.pipeline else 'not pipelined'}; medians of {arguments.rounds} "
        f"rounds (min-max of reconnects/s in brackets); client event loop: {arguments.event_loop}")) + [
        "",
        "| server | mode | mechanism | reconnects/s | server CPU µs/reconnect | beyond tls µs | p50 ms "
        "| p99 ms | p50 ms to closed | round trips before TLS (+ TLS) | round trips after TLS | client CPU "
        "| failed |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        for mode in MODES:
            row = table.get((name, mode))
            if not row:
                continue
            base = table.get((name, "tls"))
            beyond = (f"{row['server_cpu_us'] - base['server_cpu_us']:.0f}"
                      if base and mode != "tls" and row["server_cpu_us"] is not None else "")
            lines.append(
                f"| {name} | {mode} | {row['mechanism']} | {row['reconnects_per_s']:.0f} "
                f"({min(row['rates']):.0f}-{max(row['rates']):.0f}) | {row['server_cpu_us'] or 0:.0f} | {beyond} | "
                f"{row['p50_ms']:.2f} | {row['p99_ms']:.2f} | {row['p50_closed_ms']:.2f} | "
                f"{row['round_trips_before_tls']} "
                f"(+{TLS13_ROUND_TRIPS}) | {row['round_trips_after_tls']} | {row['client_cpu_share']:.0%} | "
                f"{row['failed']} |")
    if "swiftletd" in names:
        lines += ["", "| swiftletd mode | server CPU µs/reconnect | event loop µs | other threads (storage) µs |",
                  "|---|---:|---:|---:|"]
        lines += [f"| {mode} | {row['server_cpu_us']:.0f} | {row['loop_cpu_us']:.0f} | {row['other_threads_cpu_us']:.0f} |"
                  for mode, row in ((mode, table.get(("swiftletd", mode))) for mode in MODES)
                  if row and row["server_cpu_us"] is not None]
    lines += ratio_lines(table, names)
    notes = [f"- {r['server']} {r['mode']} round {r['round']}: {r['errors']}" for r in report["reconnects"]
             if r["errors"]]
    notes += [f"- {r['server']} {r['mode']} round {r['round']}: reconnects took different paths: "
              f"{r['round_trips_seen']}" for r in report["reconnects"] if len(r["round_trips_seen"]) > 1]
    notes += [f"- skipped: {text}" for text in report["skipped"]]
    notes += [f"- {name}: no SASL2 offered, tls and legacy modes only" for name in names
              if not report["features"].get(name, {}).get("sasl2_mechanisms")]
    return "\n".join(lines + (["", "Notes:"] + notes if notes else []))


def ratio_lines(table, names):
    """swiftletd's FAST reconnects (full TLS, and resumed TLS) against its
    own full SCRAM logins and every server's legacy one: server CPU with
    the TLS handshake and beyond it (the goal: under 1/3), and the round
    trips after TLS."""
    lines = []
    fast_tls = table.get(("swiftletd", "tls"))
    for fast_mode in FAST_MODES:
        fast = table.get(("swiftletd", fast_mode))
        if not fast or fast["server_cpu_us"] is None:
            continue
        lines += ["", f"| swiftletd {fast_mode} ÷ | server CPU | server CPU beyond tls (each server's own) "
                  "| round trips after TLS |", "|---|---:|---:|---:|"]
        for name, mode in [("swiftletd", "sasl2"), ("swiftletd", "legacy")] + [
                (name, "legacy") for name in names if name != "swiftletd"]:
            other, base = table.get((name, mode)), table.get((name, "tls"))
            if not other or not other["server_cpu_us"]:
                continue
            beyond = "n/a"
            if fast_tls and base and fast_mode == "fast":  # a resumed handshake is no tls-mode one
                theirs = other["server_cpu_us"] - base["server_cpu_us"]
                ours = fast["server_cpu_us"] - fast_tls["server_cpu_us"]
                beyond = f"{ours / theirs:.2f}" if theirs > 0 else "n/a"
            lines.append(
                f"| {name} {mode} | **{fast['server_cpu_us'] / other['server_cpu_us']:.2f}** | {beyond} | "
                f"{fast['round_trips_after_tls']} vs {other['round_trips_after_tls']} |")
    return lines


def main():
    routing.benchmark_main("reconnect", parse_arguments, run, format_tables,
                           lambda arguments: arguments.concurrency, ("reconnects",))


if __name__ == "__main__":
    main()
