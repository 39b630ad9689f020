#!/usr/bin/env python3
"""swiftletd against Prosody (and ejabberd, when installed) on this machine, in one run.

Measures, for each server:
  1. logins per second: full logins (see xmpp_load.py) from a few
     concurrent connections, plus the server's CPU time for them, which
     gives server CPU per login (less sensitive to a busy machine); in
     three variants: no TLS, STARTTLS with a full TLS handshake each time,
     and STARTTLS resuming the previous login's TLS session (its ticket);
  2. memory per idle session (swiftletd, Prosody and ejabberd): the
     growth of the server's RSS over a baseline, divided by the number of
     bound, idle sessions held open; and the RSS once they have all closed
     again;
  3. with --account-scale, swiftletd's CPU per login with 1,000 to 100,000
     accounts in its database, logging in as a random sample of them.

`--swiftletd-before PATH` adds a second swiftletd binary (an older build)
to every login measurement, side by side. `--no-memory` skips the
idle-session phase, `--memory-only` everything else.

Each server runs as a child process in a temp dir removed at the end; only
those children are ever signalled. Every phase has a deadline, so the run
ends by itself. Prints Markdown tables (and writes JSON with --json).

Usage: benchmark.py --swiftletd PATH [options]   (see --help)
"""
import argparse
import asyncio
import datetime
import json
import os
import platform
import random
import resource
import shutil
import signal
import sqlite3
import ssl
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import ejabberd
import servers
import xmpp_load

PASSWORD = "bench-password"
SETTLE_SECONDS = 2.0
#: How long closed sessions get to be cleaned up (a garbage collector's
#: included) before the RSS after close is read.
CLOSE_SETTLE_SECONDS = 5.0
#: swiftletd (`max_resources_per_account`) and ejabberd (as configured)
#: allow 10 sessions per account: idle sessions are spread over enough
#: accounts to stay below that.
SESSIONS_PER_ACCOUNT = 8
#: The login variants: (name, STARTTLS, resume the TLS session).
VARIANTS = {"plain": (False, False), "starttls": (True, False), "resumed": (True, True)}
VARIANT_LABELS = {"plain": "no TLS", "starttls": "STARTTLS, full handshake", "resumed": "STARTTLS, resumed"}
#: The servers --servers chooses from; the idle-session phase measures
#: these (not the older build of --swiftletd-before).
SERVER_NAMES = ("swiftletd", "prosody", "ejabberd")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swiftletd", required=True, help="the swiftletd binary (a release build)")
    parser.add_argument("--swiftletd-before", help="an older swiftletd binary, measured beside it")
    parser.add_argument("--servers", default=",".join(SERVER_NAMES),
                        help="servers to compare with (ejabberd is skipped when not installed)")
    parser.add_argument("--without-ejabberd", action="store_true", help="leave ejabberd out even if installed")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="login variants: plain,starttls,resumed")
    parser.add_argument("--no-memory", dest="memory", action="store_false", help="skip the idle-session memory phase")
    parser.add_argument("--memory-only", action="store_true", help="skip the logins; measure memory only")
    parser.add_argument("--account-scale", default="",
                        help="account counts for swiftletd's CPU per login against database size, e.g. 1000,10000,100000")
    parser.add_argument("--scale-sample", type=int, default=1000,
                        help="accounts (chosen at random) the logins of --account-scale cycle through")
    parser.add_argument("--logins", type=int, default=2000, help="measured logins per server and variant")
    parser.add_argument("--warmup", type=int, default=200, help="logins before each measurement")
    parser.add_argument("--rounds", type=int, default=10,
                        help="the measured logins are split into this many rounds, servers taking turns")
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent client connections")
    parser.add_argument("--sessions", default="1000,5000", help="idle session counts, ascending")
    parser.add_argument("--accounts", type=int, default=50,
                        help="accounts the logins cycle through (idle sessions use more if they need)")
    parser.add_argument("--phase-timeout", type=float, default=240, help="seconds allowed per phase")
    parser.add_argument("--revision", default="unknown", help="swiftletd's source revision, for the report")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (server logs)")
    arguments = parser.parse_args()
    arguments.session_counts = [int(count) for count in arguments.sessions.split(",")]
    arguments.server_names = arguments.servers.split(",")
    if arguments.without_ejabberd:
        arguments.server_names = [name for name in arguments.server_names if name != "ejabberd"]
    arguments.variant_names = arguments.variants.split(",")
    arguments.scale_counts = [int(count) for count in arguments.account_scale.split(",") if count]
    if set(arguments.server_names) - set(SERVER_NAMES) or "swiftletd" not in arguments.server_names:
        parser.error(f"--servers: swiftletd and any of {', '.join(SERVER_NAMES[1:])}")
    if set(arguments.variant_names) - set(VARIANTS):
        parser.error(f"--variants: any of {', '.join(VARIANTS)}")
    if arguments.memory_only and not arguments.memory:
        parser.error("--memory-only and --no-memory exclude each other")
    if arguments.memory_only and arguments.scale_counts:
        parser.error("--memory-only and --account-scale exclude each other")
    return arguments


def raise_fd_limit(needed):
    """Raises the soft open-files limit towards `needed` (within the hard
    limit); the servers inherit it. Returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        soft = wanted
    return soft


def client_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def summarize_errors(outcome):
    return "; ".join(f"{count}x {text}" for text, count in outcome.errors.items())


class LoginTally:
    """One server's measured logins, summed over the rounds."""

    def __init__(self, server, target, accounts):
        self.server, self.target, self.accounts = server, target, accounts
        self.outcome = xmpp_load.Outcome()
        self.wall = self.server_cpu = self.client_cpu = 0.0
        self.rss_before = None
        self.rss_after = None

    async def measure(self, logins, arguments):
        """One batch of `logins`, added to the tally."""
        rss_before, _ = self.server.memory_kib()
        self.rss_before = self.rss_before or rss_before
        server_cpu, client_cpu, started = self.server.cpu_seconds(), client_cpu_seconds(), time.perf_counter()
        outcome = await xmpp_load.run_logins(self.target, self.accounts, logins, arguments.concurrency)
        self.wall += time.perf_counter() - started
        self.server_cpu += self.server.cpu_seconds() - server_cpu
        self.client_cpu += client_cpu_seconds() - client_cpu
        self.rss_after, _ = self.server.memory_kib()
        self.outcome.ok += outcome.ok
        self.outcome.resumed += outcome.resumed
        self.outcome.latencies += outcome.latencies
        for text, count in outcome.errors.items():
            self.outcome.errors[text] = self.outcome.errors.get(text, 0) + count

    def result(self, variant):
        outcome, wall, server_cpu = self.outcome, self.wall, self.server_cpu
        return {
            "server": self.server.name, "variant": variant, "tls": self.target.use_tls,
            "tls_version": self.target.tls_version, "logins": outcome.ok, "resumed": outcome.resumed,
            "failed": sum(outcome.errors.values()), "errors": summarize_errors(outcome),
            "wall_s": wall, "logins_per_s": outcome.ok / wall,
            "server_cpu_s": server_cpu, "logins_per_server_cpu_s": outcome.ok / server_cpu if server_cpu else None,
            "server_cpu_us_per_login": server_cpu / outcome.ok * 1e6 if outcome.ok else None,
            "server_cpu_share": server_cpu / wall, "client_cpu_share": self.client_cpu / wall,
            "p50_ms": outcome.percentile(0.50) * 1000, "p99_ms": outcome.percentile(0.99) * 1000,
            # Closed sessions should give their memory back: RSS growth per
            # login over the batches stays near 0 unless something is kept.
            "rss_growth_kib_per_login": (self.rss_after - self.rss_before) / outcome.ok if outcome.ok else None,
        }


async def measure_logins(chosen, variant, arguments, accounts):
    """Warm-up logins on each server, then the measured ones in
    `arguments.rounds` rounds in which the servers take turns, so that a
    change in the machine's load falls on all of them alike. `accounts`
    lists, per server, the accounts its logins cycle through. Returns a
    result dict per server."""
    use_tls, resume = VARIANTS[variant]
    tallies = []
    for server, its_accounts in zip(chosen, accounts):
        target = xmpp_load.Target("127.0.0.1", server.port, servers.DOMAIN, use_tls, resume=resume)
        await xmpp_load.run_logins(target, its_accounts, arguments.warmup, arguments.concurrency)
        tallies.append(LoginTally(server, target, its_accounts))
    for round_number in range(arguments.rounds):
        logins = arguments.logins // arguments.rounds + (round_number < arguments.logins % arguments.rounds)
        for tally in tallies:
            await tally.measure(logins, arguments)
    return [tally.result(variant) for tally in tallies]


async def measure_memory(server, use_tls, arguments, accounts):
    """RSS growth per idle bound session at each count. The server is
    fresh; warm-up logins come first so that one-time costs (code paths
    touched once, allocator pools) fall in the baseline."""
    target = xmpp_load.Target("127.0.0.1", server.port, servers.DOMAIN, use_tls)
    await xmpp_load.run_logins(target, accounts, arguments.warmup, arguments.concurrency)
    await asyncio.sleep(SETTLE_SECONDS)
    baseline, baseline_anon = server.memory_kib()
    sessions, results = [], []
    try:
        for count in arguments.session_counts:
            outcome = await xmpp_load.open_sessions(
                target, accounts, count - len(sessions), arguments.concurrency, len(sessions), sessions)
            await asyncio.sleep(SETTLE_SECONDS)
            rss, _ = server.memory_kib()
            results.append({
                "server": server.name, "tls": use_tls, "sessions": len(sessions), "target": count,
                "baseline_kib": baseline, "baseline_anon_kib": baseline_anon, "rss_kib": rss,
                "kib_per_session": (rss - baseline) / len(sessions) if sessions else None,
                "failed": sum(outcome.errors.values()), "errors": summarize_errors(outcome),
            })
    finally:
        for session in sessions:
            session.abort()
        # Let the server clean up before its RSS is read and it is stopped.
        await asyncio.sleep(CLOSE_SETTLE_SECONDS)
    # What the closed sessions left behind: back near the baseline unless
    # something is kept or the allocator holds on to freed memory.
    after_close, _ = server.memory_kib()
    for result in results:
        result["rss_after_close_kib"] = after_close
    return results


async def with_deadline(coroutine, seconds, what):
    try:
        return await asyncio.wait_for(coroutine, seconds)
    except asyncio.TimeoutError:
        raise RuntimeError(f"{what} did not finish within {seconds:.0f}s") from None


class BeforeSwiftletd(servers.Swiftletd):
    """The older swiftletd binary of --swiftletd-before, set up alike."""

    name = "swiftletd-before"


def make_servers(arguments, workdir, report):
    """The servers of this run: swiftletd first, then the older build, if
    any, and the others chosen with --servers."""
    chosen = [servers.Swiftletd(os.path.join(workdir, "swiftletd"), arguments.swiftletd)]
    if arguments.swiftletd_before:
        chosen.append(BeforeSwiftletd(os.path.join(workdir, "swiftletd-before"), arguments.swiftletd_before))
    if "prosody" in arguments.server_names:
        chosen.append(servers.Prosody(os.path.join(workdir, "prosody")))
    if "ejabberd" in arguments.server_names:
        if ejabberd.available():
            chosen.append(ejabberd.StartTLSEjabberd(os.path.join(workdir, "ejabberd")))
        else:
            report["skipped"].append("ejabberd (not installed: apt-get install ejabberd)")
            log("ejabberd is not installed; skipped")
    return chosen


def provision_accounts(server, count):
    """TEST-ONLY SHORTCUT for the benchmark: `count` accounts bench0,
    bench1, … in a swiftletd data dir that no server has open, all with
    the SCRAM credentials (salt included) of bench0.

    `swiftletd adduser` runs PBKDF2 for every account, far too slow for
    100,000 of them; so bench0 is made with it (which also creates the
    database) and its credential rows are copied to the others, in one
    transaction, into the tables of migration 0001-accounts
    (Sources/XMPPStorage/Storage.swift)."""
    server.add_user("bench0", PASSWORD)
    database = sqlite3.connect(os.path.join(server.data_dir, "swiftlet.sqlite"))
    try:
        with database:
            database.executemany(
                "INSERT INTO accounts (username) VALUES (?)", ((f"bench{i}",) for i in range(1, count)))
            database.execute(
                "INSERT INTO scram_credentials (account_id, hash_function, salt, iterations, stored_key, server_key) "
                "SELECT a.id, c.hash_function, c.salt, c.iterations, c.stored_key, c.server_key "
                "FROM accounts AS a, scram_credentials AS c JOIN accounts AS t ON t.id = c.account_id "
                "WHERE t.username = 'bench0' AND a.username != 'bench0'")
    finally:
        database.close()


async def run(arguments, workdir, report, started):
    """Every measurement; fills `report` as it goes. The servers are
    appended to `started` as soon as they exist, for the caller to stop."""
    chosen = make_servers(arguments, workdir, report)
    started += chosen
    # The idle-session phase measures the servers of --servers, each on
    # enough accounts for SESSIONS_PER_ACCOUNT; the logins cycle through
    # the first `arguments.accounts` of them.
    memory_servers = [server for server in chosen if server.name in SERVER_NAMES] if arguments.memory else []
    needed = -(-max(arguments.session_counts) // SESSIONS_PER_ACCOUNT) if memory_servers else 0
    idle_accounts = [(f"bench{i}", PASSWORD) for i in range(max(needed, arguments.accounts))]
    accounts = idle_accounts[:arguments.accounts]

    def accounts_of(server):
        return idle_accounts if server in memory_servers else accounts

    by_tool = [server for server in chosen if not isinstance(server, ejabberd.Ejabberd)]
    # One thread per server: concurrent `swiftletd adduser` runs on one
    # database can outwait SQLite's busy timeout on a loaded machine.
    with ThreadPoolExecutor(len(by_tool)) as pool:
        list(pool.map(lambda server: [server.add_user(user, PASSWORD) for user, _ in accounts_of(server)], by_tool))
    report["versions"] = {server.name: server.version() for server in chosen}
    registered = []

    async def start(server):
        """Starts `server`; ejabberd makes its accounts by in-band
        registration on its first start (its spool keeps them)."""
        server.start()
        if isinstance(server, ejabberd.Ejabberd) and server not in registered:
            await with_deadline(server.register(accounts_of(server)), arguments.phase_timeout,
                                "ejabberd registrations")
            registered.append(server)

    # Logins: every server up, variants and servers interleaved.
    if not arguments.memory_only:
        for server in chosen:
            await start(server)
        try:
            for variant in arguments.variant_names:
                label = f"logins ({VARIANT_LABELS[variant]})"
                log(label)
                report["logins"] += await with_deadline(
                    measure_logins(chosen, variant, arguments, [accounts] * len(chosen)),
                    arguments.phase_timeout * len(chosen), label)
        finally:
            for server in chosen:
                server.stop()

    # Memory: a fresh process per server and variant.
    for use_tls in (False, True):
        for server in memory_servers:
            label = f"{server.name} idle sessions ({'TLS' if use_tls else 'no TLS'})"
            log(label)
            try:
                await start(server)
                report["memory"] += await with_deadline(
                    measure_memory(server, use_tls, arguments, idle_accounts), arguments.phase_timeout, label)
            except Exception as error:  # a server that died, stalled or refused: the others go on
                log(f"{label} failed: {error!r}")
                report["memory_failures"].append(f"{label}: {error!r}")
            finally:
                server.stop()

    # Database size: a fresh swiftletd per account count, all up at once
    # and taking turns, each logging in as a random sample of its accounts.
    scaled, samples = [], []
    for count in arguments.scale_counts:
        server = servers.Swiftletd(os.path.join(workdir, f"swiftletd-{count}-accounts"), arguments.swiftletd)
        server.name = f"swiftletd, {count} accounts"
        started.append(server)
        log(f"{count} accounts for swiftletd")
        provision_accounts(server, count)
        sample = random.Random(count).sample(range(count), min(count, arguments.scale_sample))
        samples.append([(f"bench{i}", PASSWORD) for i in sample])
        scaled.append(server)
    if not scaled:
        return
    for server in scaled:
        server.start()
    try:
        for variant in arguments.variant_names:
            label = f"logins with {', '.join(map(str, arguments.scale_counts))} accounts ({VARIANT_LABELS[variant]})"
            log(label)
            results = await with_deadline(
                measure_logins(scaled, variant, arguments, samples), arguments.phase_timeout * len(scaled), label)
            report["scale"] += [dict(result, accounts=count, sample=len(sample))
                                for result, count, sample in zip(results, arguments.scale_counts, samples)]
    finally:
        for server in scaled:
            server.stop()


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def machine_description():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(),
        "python": platform.python_version(), "openssl": ssl.OPENSSL_VERSION,
        "load_average_at_start": os.getloadavg(),
    }


def ratio(ours, theirs):
    return f"{ours / theirs:.2f}x" if ours and theirs else "n/a"


def format_tables(report):
    """The report as Markdown tables, swiftletd next to the others."""
    versions, machine, settings = report["versions"], report["machine"], report["settings"]
    lines = [
        f"{'; '.join(f'{name}: {text.splitlines()[0]}' for name, text in versions.items() if text)} "
        f"(swiftletd {settings['revision']}); {machine['date']}; "
        f"{machine['nproc']} CPUs ({machine['cpu']}); {machine['openssl']}; load average "
        f"{machine['load_average_at_start'][0]:.1f} at start, {machine['load_average_at_end'][0]:.1f} at end",
    ]
    if report["logins"] or report["scale"]:
        lines.append(
            f"SASL SCRAM-SHA-1, {settings['logins']} logins per cell after "
            f"{settings['warmup']} warm-up, in {settings['rounds']} rounds with the servers taking turns, "
            f"{settings['concurrency']} concurrent connections")
    if report["logins"]:
        lines += [
            "",
            "| logins | server | server CPU µs/login | logins/server-CPU-s | logins/s | TLS resumed | server CPU "
            "| client CPU | p50 ms | p99 ms | RSS growth KiB/login | failed |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
    names = list(versions)
    by_key = {(r["server"], r["variant"]): r for r in report["logins"]}
    for variant in VARIANTS:
        rows = [by_key[(name, variant)] for name in names if (name, variant) in by_key]
        label = VARIANT_LABELS[variant] + (f" ({rows[0]['tls_version']})" if rows and rows[0]["tls"] else "")
        for r in rows:
            lines.append(
                f"| {label} | {r['server']} | {r['server_cpu_us_per_login'] or 0:.0f} | "
                f"{r['logins_per_server_cpu_s'] or 0:.0f} | {r['logins_per_s']:.0f} | "
                f"{r['resumed'] / r['logins'] if r['logins'] else 0:.0%} | "
                f"{r['server_cpu_share']:.0%} | {r['client_cpu_share']:.0%} | {r['p50_ms']:.1f} | "
                f"{r['p99_ms']:.1f} | {r['rss_growth_kib_per_login'] or 0:.2f} | {r['failed']} |")
        ours = by_key.get(("swiftletd", variant))
        for r in rows[1:]:
            lines.append(
                f"| {label} | **swiftletd / {r['server']}** | "
                f"**{ratio(ours['server_cpu_us_per_login'], r['server_cpu_us_per_login'])}** | | | | | | | | | |")
    resumption = []
    for name in names:
        full, resumed = by_key.get((name, "starttls")), by_key.get((name, "resumed"))
        if full and resumed:
            resumption.append(
                f"{name} {ratio(resumed['server_cpu_us_per_login'], full['server_cpu_us_per_login'])}")
    if resumption:
        lines += ["", "Server CPU per resumed login ÷ per full-handshake login: " + ", ".join(resumption)]
    if report["memory"]:
        lines += [
            "",
            "| memory | server | sessions | baseline RSS MiB (anon) | RSS MiB | KiB/session "
            "| RSS after close MiB (vs baseline) | failed |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
    by_key = {(r["server"], r["tls"], r["target"]): r for r in report["memory"]}
    for use_tls in (False, True):
        variant = "STARTTLS" if use_tls else "no TLS"
        for count in settings["session_counts"]:
            for name in SERVER_NAMES:
                r = by_key.get((name, use_tls, count))
                if r:
                    after = r["rss_after_close_kib"]
                    lines.append(
                        f"| {variant} | {name} | {r['sessions']} | "
                        f"{r['baseline_kib'] / 1024:.1f} ({r['baseline_anon_kib'] / 1024:.1f}) | "
                        f"{r['rss_kib'] / 1024:.1f} | {r['kib_per_session'] or 0:.1f} | "
                        f"{after / 1024:.1f} ({after / r['baseline_kib'] - 1:+.0%}) | {r['failed']} |")
            ours = by_key.get(("swiftletd", use_tls, count))
            for name in SERVER_NAMES[1:]:
                theirs = by_key.get((name, use_tls, count))
                if ours and theirs:
                    lines.append(
                        f"| {variant} | **swiftletd / {name}** | {count} | | | "
                        f"**{ratio(ours['kib_per_session'], theirs['kib_per_session'])}** | | |")
    if report["scale"]:
        lines += [
            "",
            "| accounts in the database | logins as (random sample) | logins | server CPU µs/login | logins/s | p50 ms | failed |",
            "|---:|---:|---|---:|---:|---:|---:|",
        ]
        for r in sorted(report["scale"], key=lambda r: (r["accounts"], list(VARIANTS).index(r["variant"]))):
            lines.append(
                f"| {r['accounts']} | {r['sample']} | {VARIANT_LABELS[r['variant']]} | "
                f"{r['server_cpu_us_per_login'] or 0:.0f} | {r['logins_per_s']:.0f} | {r['p50_ms']:.1f} | {r['failed']} |")
    errors = [f"- {r['server']} ({r.get('variant') or ('TLS' if r['tls'] else 'no TLS')}): {r['errors']}"
              for r in report["logins"] + report["memory"] + report["scale"] if r["errors"]]
    errors += [f"- {failure}" for failure in report["memory_failures"]]
    if errors:
        lines += ["", "Errors:"] + errors
    if report["skipped"]:
        lines += ["", "Skipped: " + ", ".join(report["skipped"])]
    return "\n".join(lines)


def main():
    if sys.version_info < (3, 11):
        sys.exit("benchmark.py needs Python 3.11 or later (asyncio.timeout, StreamWriter.start_tls)")
    arguments = parse_arguments()
    # Client sockets plus the servers' (which inherit the limit), with room.
    limit = raise_fd_limit(max(arguments.session_counts) + 1024)
    if limit < max(arguments.session_counts) + 100:
        sys.exit(f"open-files limit {limit} is too low for {max(arguments.session_counts)} sessions")
    # SIGTERM unwinds like Ctrl-C, through the cleanup below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = tempfile.mkdtemp(prefix="swiftlet-bench-")
    report = {
        "machine": machine_description(), "logins": [], "memory": [], "memory_failures": [], "scale": [],
        "skipped": [],
        "versions": {"swiftletd": "swiftletd"},
        "settings": {key: getattr(arguments, key) for key in (
            "logins", "warmup", "rounds", "concurrency", "session_counts", "revision", "scale_counts",
            "scale_sample")},
    }
    started, status = [], 0
    try:
        asyncio.run(run(arguments, workdir, report, started))
    except RuntimeError as error:  # a server that did not start, a phase past its deadline
        log(f"stopped early: {error}")
        status = 1
    finally:
        for server in started:
            server.stop()
        if arguments.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    report["machine"]["load_average_at_end"] = os.getloadavg()
    # Whatever was measured, even after a failure.
    print(format_tables(report))
    if arguments.json:
        with open(arguments.json, "w") as output:
            json.dump(report, output, indent=2)
    sys.exit(status)


if __name__ == "__main__":
    main()
