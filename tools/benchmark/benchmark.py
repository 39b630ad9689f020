#!/usr/bin/env python3
"""swiftletd against Prosody (and ejabberd) on this machine, in one run.

Measures, for each server, with and without STARTTLS:
  1. logins per second: full logins (see xmpp_load.py) from a few
     concurrent connections, plus the server's CPU time for them, which
     gives logins per server-CPU-second (less sensitive to a busy machine);
     swiftletd and Prosody only;
  2. memory per idle session: the growth of the server's RSS over a
     baseline, divided by the number of bound, idle sessions held open;
     and the RSS once they have all closed again. ejabberd too, when it
     is installed.

Each server runs as a child process in a temp dir removed at the end; only
those children are ever signalled. Every phase has a deadline, so the run
ends by itself. Prints a Markdown table (and writes JSON with --json).

Usage: benchmark.py --swiftletd PATH [options]   (see --help)
"""
import argparse
import asyncio
import datetime
import json
import os
import platform
import resource
import shutil
import signal
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


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swiftletd", required=True, help="the swiftletd binary (a release build)")
    parser.add_argument("--logins", type=int, default=2000, help="measured logins per server and variant")
    parser.add_argument("--warmup", type=int, default=200, help="logins before each measurement")
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent client connections")
    parser.add_argument("--sessions", default="1000,5000", help="idle session counts, ascending")
    parser.add_argument("--accounts", type=int, default=50,
                        help="accounts the logins cycle through (idle sessions use more if they need)")
    parser.add_argument("--phase-timeout", type=float, default=240, help="seconds allowed per phase")
    parser.add_argument("--revision", default="unknown", help="swiftletd's source revision, for the report")
    parser.add_argument("--memory-only", action="store_true", help="skip the logins; measure memory only")
    parser.add_argument("--without-ejabberd", action="store_true", help="leave ejabberd out even if installed")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (server logs)")
    arguments = parser.parse_args()
    arguments.session_counts = [int(count) for count in arguments.sessions.split(",")]
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


async def measure_logins(server, use_tls, arguments, accounts):
    """Warm-up logins, then the measured batch. Returns a result dict."""
    target = xmpp_load.Target("127.0.0.1", server.port, servers.DOMAIN, use_tls)
    await xmpp_load.run_logins(target, accounts, arguments.warmup, arguments.concurrency)
    rss_before, _ = server.memory_kib()
    server_cpu, client_cpu, started = server.cpu_seconds(), client_cpu_seconds(), time.perf_counter()
    outcome = await xmpp_load.run_logins(target, accounts, arguments.logins, arguments.concurrency)
    wall = time.perf_counter() - started
    rss_after, _ = server.memory_kib()
    server_cpu = server.cpu_seconds() - server_cpu
    client_cpu = client_cpu_seconds() - client_cpu
    return {
        "server": server.name, "tls": use_tls, "tls_version": target.tls_version,
        "logins": outcome.ok, "failed": sum(outcome.errors.values()), "errors": summarize_errors(outcome),
        "wall_s": wall, "logins_per_s": outcome.ok / wall,
        "server_cpu_s": server_cpu, "logins_per_server_cpu_s": outcome.ok / server_cpu if server_cpu else None,
        "server_cpu_share": server_cpu / wall, "client_cpu_share": client_cpu / wall,
        "p50_ms": outcome.percentile(0.50) * 1000, "p99_ms": outcome.percentile(0.99) * 1000,
        # Closed sessions should give their memory back: RSS growth per
        # login over the batch stays near 0 unless something is kept.
        "rss_growth_kib_per_login": (rss_after - rss_before) / outcome.ok if outcome.ok else None,
    }


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


async def run(arguments, workdir, report, started):
    """Every measurement; fills `report` as it goes. The servers are
    appended to `started` as soon as they exist, for the caller to stop."""
    swiftletd = servers.Swiftletd(os.path.join(workdir, "swiftletd"), arguments.swiftletd)
    started.append(swiftletd)
    prosody = servers.Prosody(os.path.join(workdir, "prosody"))
    started.append(prosody)
    both = [swiftletd, prosody]
    needed = -(-max(arguments.session_counts) // SESSIONS_PER_ACCOUNT)
    idle_accounts = [(f"bench{i}", PASSWORD) for i in range(max(needed, arguments.accounts))]
    accounts = idle_accounts[:arguments.accounts]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda job: job[0].add_user(job[1], PASSWORD),
                      [(server, user) for server in both for user, _ in idle_accounts]))
    report["versions"] = {"swiftletd": swiftletd.version(), "prosody": prosody.version()}
    memory_servers = list(both)
    if arguments.without_ejabberd:
        log("ejabberd left out")
    elif not ejabberd.available():
        log("ejabberd is not installed (apt-get install ejabberd); measuring without it")
    else:
        ejabberd_server = ejabberd.TLSEjabberd(os.path.join(workdir, "ejabberd"))
        started.append(ejabberd_server)
        memory_servers.append(ejabberd_server)
        report["versions"]["ejabberd"] = ejabberd_server.version()

    # Logins: both servers up, variants and servers interleaved.
    if not arguments.memory_only:
        for server in both:
            server.start()
        try:
            for use_tls in (False, True):
                for server in both:
                    label = f"{server.name} logins ({'TLS' if use_tls else 'no TLS'})"
                    log(label)
                    result = await with_deadline(
                        measure_logins(server, use_tls, arguments, accounts), arguments.phase_timeout, label)
                    report["logins"].append(result)
        finally:
            for server in both:
                server.stop()

    # Memory: a fresh process per server and variant.
    for use_tls in (False, True):
        for server in memory_servers:
            label = f"{server.name} idle sessions ({'TLS' if use_tls else 'no TLS'})"
            log(label)
            server.start()
            try:
                if isinstance(server, ejabberd.Ejabberd) and not use_tls:  # its first start
                    await with_deadline(server.register(idle_accounts), arguments.phase_timeout,
                                        "ejabberd registrations")
                report["memory"] += await with_deadline(
                    measure_memory(server, use_tls, arguments, idle_accounts), arguments.phase_timeout, label)
            except Exception as error:  # a server that died, stalled or refused: the others go on
                log(f"{label} failed: {error!r}")
                report["memory_failures"].append(f"{label}: {error!r}")
            finally:
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
    """The report as Markdown tables, swiftletd next to Prosody (and
    ejabberd)."""
    versions, machine = report["versions"], report["machine"]
    others = " vs ".join(versions[name] for name in ("prosody", "ejabberd") if name in versions)
    lines = [
        f"{versions['swiftletd']} ({report['settings']['revision']}) vs {others}; {machine['date']}; "
        f"{machine['nproc']} CPUs ({machine['cpu']}); {machine['openssl']}; load average "
        f"{machine['load_average_at_start'][0]:.1f} at start, {machine['load_average_at_end'][0]:.1f} at end",
        f"SASL SCRAM-SHA-1, {report['settings']['logins']} logins per cell after "
        f"{report['settings']['warmup']} warm-up, {report['settings']['concurrency']} concurrent connections",
        "",
        "| logins | server | logins/s | logins/server-CPU-s | server CPU | client CPU | p50 ms | p99 ms "
        "| RSS growth KiB/login | failed |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by_key = {(r["server"], r["tls"]): r for r in report["logins"]}
    for use_tls in (False, True):
        variant = f"STARTTLS ({by_key.get(('swiftletd', True), {}).get('tls_version')})" if use_tls else "no TLS"
        for name in ("swiftletd", "prosody"):
            r = by_key.get((name, use_tls))
            if r:
                lines.append(
                    f"| {variant} | {name} | {r['logins_per_s']:.0f} | {r['logins_per_server_cpu_s'] or 0:.0f} | "
                    f"{r['server_cpu_share']:.0%} | {r['client_cpu_share']:.0%} | {r['p50_ms']:.1f} | "
                    f"{r['p99_ms']:.1f} | {r['rss_growth_kib_per_login'] or 0:.2f} | {r['failed']} |")
        ours, theirs = by_key.get(("swiftletd", use_tls)), by_key.get(("prosody", use_tls))
        if ours and theirs:
            lines.append(
                f"| {variant} | **swiftletd / prosody** | **{ratio(ours['logins_per_s'], theirs['logins_per_s'])}** | "
                f"**{ratio(ours['logins_per_server_cpu_s'], theirs['logins_per_server_cpu_s'])}** | | | | | | |")
    lines += [
        "",
        "| memory | server | sessions | baseline RSS MiB (anon) | RSS MiB | KiB/session "
        "| RSS after close MiB (vs baseline) | failed |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    by_key = {(r["server"], r["tls"], r["target"]): r for r in report["memory"]}
    for use_tls in (False, True):
        variant = "STARTTLS" if use_tls else "no TLS"
        for count in report["settings"]["session_counts"]:
            for name in ("swiftletd", "prosody", "ejabberd"):
                r = by_key.get((name, use_tls, count))
                if r:
                    after = r["rss_after_close_kib"]
                    lines.append(
                        f"| {variant} | {name} | {r['sessions']} | "
                        f"{r['baseline_kib'] / 1024:.1f} ({r['baseline_anon_kib'] / 1024:.1f}) | "
                        f"{r['rss_kib'] / 1024:.1f} | {r['kib_per_session'] or 0:.1f} | "
                        f"{after / 1024:.1f} ({after / r['baseline_kib'] - 1:+.0%}) | {r['failed']} |")
            ours = by_key.get(("swiftletd", use_tls, count))
            for name in ("prosody", "ejabberd"):
                theirs = by_key.get((name, use_tls, count))
                if ours and theirs:
                    lines.append(
                        f"| {variant} | **swiftletd / {name}** | {count} | | | "
                        f"**{ratio(ours['kib_per_session'], theirs['kib_per_session'])}** | | |")
    errors = [f"- {r['server']} ({'TLS' if r['tls'] else 'no TLS'}): {r['errors']}"
              for r in report["logins"] + report["memory"] if r["errors"]]
    errors += [f"- {failure}" for failure in report["memory_failures"]]
    if errors:
        lines += ["", "Errors:"] + errors
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
        "machine": machine_description(), "logins": [], "memory": [], "memory_failures": [],
        "versions": {"swiftletd": "swiftletd", "prosody": "Prosody"},
        "settings": {key: getattr(arguments, key) for key in ("logins", "warmup", "concurrency", "session_counts", "revision")},
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
