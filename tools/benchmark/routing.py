#!/usr/bin/env python3
"""Message routing: swiftletd, Prosody and ejabberd on this machine, in one run.

For each server, in rounds (swiftletd, Prosody, ejabberd, swiftletd, …),
each round on a freshly started process, without TLS:
  1. routed messages: for each pair count, that many senders and receivers
     logged in, bound and available; sender i sends chat messages to the
     bare JID of receiver i, keeping `--window` in flight, for
     `--seconds` (after a warm-up). Reports messages/s, end-to-end latency
     (p50, p99, measured at the receiver), the server's CPU time per
     message (utime+stime from /proc) and the client's CPU share;
  2. offline messages (XEP-0160): `--offline` messages from 10 senders to a
     user who is offline (store phase, until every sender's ping after
     them is answered), then that user logs in and sends initial presence
     (delivery phase, until the last message arrives). With
     `--offline-window N` the store phase goes in steps of N messages, and
     the first and last steps are reported apart: the cost of storing with
     a short backlog and with a long one.
Every message is checked to arrive exactly once, at its own receiver.
Medians over the rounds are printed as Markdown tables (JSON with --json).

swiftletd archives one-to-one messages (XEP-0313) by default; Prosody and
ejabberd, as configured here, do not. The servers to choose from:
  swiftletd            swiftletd's defaults: archive on
  swiftletd-noarchive  the same binary with `archive = off`
  prosody              Prosody without mod_mam (nothing archived)
  prosody-mam          Prosody with mod_mam, its defaults (archive all)
  ejabberd             ejabberd without mod_mam (nothing archived)
The default is swiftletd,prosody,ejabberd; to see what archiving costs,
e.g. --servers swiftletd,swiftletd-noarchive,prosody,prosody-mam.

Usage: routing.py --swiftletd PATH [options]   (see --help)
"""
import argparse
import asyncio
import importlib.util
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import benchmark
import ejabberd
import routing_load
import servers
import xmpp_load

PASSWORD = "bench-password"
OFFLINE_SENDERS = 10
OFFLINE_USER = "offline0"
OFFLINE_DELIVERY_SECONDS = 60
DRAIN_SECONDS = 10  # after sending stops, for the messages in flight
SERVER_NAMES = ("swiftletd", "swiftletd-noarchive", "prosody", "prosody-mam", "ejabberd")
DEFAULT_SERVERS = ("swiftletd", "prosody", "ejabberd")


def parse_arguments():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\nUsage")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser, SERVER_NAMES, DEFAULT_SERVERS, seconds=5, warmup_seconds=1)
    parser.add_argument("--pairs", default="50,200", help="sender/receiver pair counts, ascending")
    parser.add_argument("--window", type=int, default=16, help="messages in flight per pair")
    parser.add_argument("--offline", type=int, default=5000, help="messages stored for the offline user")
    parser.add_argument("--offline-window", type=int, default=0,
                        help="store in steps of this many messages and report the first and last apart (0: one step)")
    parser.add_argument("--pin", action="store_true",
                        help="this client on CPU 0, the servers on CPU 1 (accounts are created unpinned)")
    arguments = parser.parse_args()
    if arguments.pin:
        os.sched_setaffinity(0, {0})
    arguments.pair_counts = [int(count) for count in arguments.pairs.split(",")]
    check_common_arguments(parser, arguments, SERVER_NAMES)
    return arguments


def add_common_arguments(parser, server_names, default_servers, seconds, warmup_seconds):
    """The options of the side-by-side benchmarks that send for a time:
    the binary, servers, rounds, timing, the client's event loop and the
    report."""
    add_server_arguments(parser, server_names, default_servers)
    parser.add_argument("--seconds", type=float, default=seconds, help="seconds of sending per measurement")
    parser.add_argument("--warmup-seconds", type=float, default=warmup_seconds, help="seconds of sending before each")
    parser.add_argument("--max-messages", type=int, default=1_000_000,
                        help="messages sent per measurement at most (sending stops at the first of the two)")
    parser.add_argument("--swiftletd-threads", type=int, default=1, help="swiftletd's event loop threads")
    add_run_arguments(parser)


def add_server_arguments(parser, server_names, default_servers):
    """The options of every side-by-side benchmark that choose what runs:
    the binary, the servers and the rounds."""
    parser.add_argument("--swiftletd", required=True, help="the swiftletd binary (a release build)")
    parser.add_argument("--servers", default=",".join(default_servers),
                        help=f"servers to run, in this order, of: {', '.join(server_names)} (see above)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all servers (medians are reported)")


def add_run_arguments(parser):
    """The options of every side-by-side benchmark about the run: the
    client's event loop and the report."""
    parser.add_argument("--event-loop", choices=("uvloop", "asyncio"), default=None,
                        help="the client's event loop (default: uvloop if installed, else asyncio)")
    parser.add_argument("--revision", default="unknown", help="swiftletd's source revision, for the report")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (server logs)")


def check_common_arguments(parser, arguments, server_names):
    """Fills in the event loop and the list of servers, or exits."""
    if arguments.event_loop is None:
        arguments.event_loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    arguments.server_names = arguments.servers.split(",")
    unknown = set(arguments.server_names) - set(server_names)
    if unknown:
        parser.error(f"unknown servers: {', '.join(sorted(unknown))}")


class RoutingSwiftletd(servers.Swiftletd):
    """swiftletd as in servers.py, with a config file that raises the
    offline quota (default 1000) when the offline phase needs more (Prosody
    has no quota; ejabberd's is raised the same way), with the stream
    management bound above it as the server requires, sets `threads`, and
    with `archive=False` turns the message archive off (it is on by
    default), as the server `swiftletd-noarchive`."""

    def __init__(self, directory, binary, threads, offline, archive=True):
        super().__init__(directory, binary)
        self.archive = archive
        self.name = "swiftletd" if archive else "swiftletd-noarchive"
        self.config_path = os.path.join(directory, "swiftletd.conf")
        quota = max(1000, offline)
        with open(self.config_path, "w") as config:
            config.write(
                f"offline_quota = {quota}\nsm_max_unacked = {max(5000, quota + 1000)}\n"
                f"threads = {threads}\narchive = {'on' if archive else 'off'}\n")

    def command(self):
        return super().command() + ["--config", self.config_path]

    def version(self):
        return super().version() + ("" if self.archive else " (archive = off)")


class ProsodyMAM(servers.Prosody):
    """Prosody as in servers.py plus mod_mam (XEP-0313) with its defaults:
    every message archived for both parties (`default_archive_policy =
    true`), in the same internal (file) storage, without fsync; items
    expire after a week and an archive over 10,000 items is truncated."""

    name = "prosody-mam"
    modules = servers.Prosody.modules + ("mam",)


def user_names(arguments):
    most = max(arguments.pair_counts)
    return ([f"sender{i}" for i in range(most)], [f"receiver{i}" for i in range(most)], [OFFLINE_USER])


async def create_accounts(server, users):
    """Every account, with the server's own tool or, for ejabberd, by
    in-band registration on a short-lived instance."""
    if isinstance(server, ejabberd.Ejabberd):
        server.start()
        try:
            await server.register([(user, PASSWORD) for user in users])
        finally:
            server.stop()
    else:
        # The first account alone: when several `swiftletd adduser` create
        # the database file at once, one can fail with "database is locked"
        # while switching it to WAL.
        server.add_user(users[0], PASSWORD)
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda user: server.add_user(user, PASSWORD), users[1:]))


async def prepare_servers(arguments, workdir, report, started, make_server, users):
    """The servers of --servers, made by `make_server(name, directory,
    arguments, report)` (None: skipped), each appended to `started` for
    the caller to stop, with the accounts `users` and its version in the
    report. Returns them."""
    chosen = [server for server in (make_server(name, os.path.join(workdir, name), arguments, report)
                                    for name in arguments.server_names) if server is not None]
    started += chosen
    for server in chosen:
        benchmark.log(f"creating {len(users)} accounts on {server.name}")
        await create_accounts(server, users)
        report["versions"][server.name] = server.version()
    return chosen


def percentile(ordered, fraction):
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def session_errors(sessions):
    count = sum(session.errors for session in sessions)
    sample = next((session.first_error for session in sessions if session.first_error), None)
    return count, sample


async def measure_routing(server, senders, receivers, arguments, run_ids):
    """A warm-up run, then the measured one, on the given pairs."""
    pairs, per_pair = len(senders), max(1, arguments.max_messages // len(senders))
    warmup = routing_load.RoutingRun(next(run_ids), senders, receivers, per_pair, arguments.window)
    await warmup.run(arguments.warmup_seconds, DRAIN_SECONDS)
    warmup.detach(receivers)
    errors_before, _ = session_errors(senders + receivers)
    run = routing_load.RoutingRun(next(run_ids), senders, receivers, per_pair, arguments.window)
    server_cpu, client_cpu = server.cpu_seconds(), benchmark.client_cpu_seconds()
    threads_before = server.thread_cpu_seconds()
    await run.run(arguments.seconds, DRAIN_SECONDS)
    server_cpu = server.cpu_seconds() - server_cpu
    threads = split_thread_cpu(threads_before, server.thread_cpu_seconds())
    client_cpu = benchmark.client_cpu_seconds() - client_cpu
    run.detach(receivers)
    wall = (run.last_received_ns - run.started_ns) / 1e9
    errors, sample = session_errors(senders + receivers)
    latencies = sorted(run.latencies_ns)
    return {
        "server": server.name, "pairs": pairs, "window": arguments.window,
        "sent": run.total_sent, "received": run.received, "lost": run.lost, "duplicates": run.duplicates,
        "misrouted": run.misrouted, "stale": run.stale, "reordered": run.reordered,
        "warmup_lost": warmup.lost, "warmup_duplicates": warmup.duplicates + warmup.misrouted,
        "reached_max_messages": not run.stopped, "errors": errors - errors_before, "error_sample": sample,
        "wall_s": wall, "msgs_per_s": run.received / wall if wall > 0 else 0.0,
        "p50_ms": percentile(latencies, 0.50) / 1e6, "p99_ms": percentile(latencies, 0.99) / 1e6,
        "server_cpu_s": server_cpu, "server_cpu_us_per_msg": server_cpu / run.received * 1e6 if run.received else None,
        "server_cpu_share": server_cpu / wall if wall > 0 else None,
        "loop_cpu_us_per_msg": threads["loop"] / run.received * 1e6 if run.received else None,
        "other_threads_cpu_us_per_msg": threads["other"] / run.received * 1e6 if run.received else None,
        "client_cpu_share": client_cpu / wall if wall > 0 else None,
    }


def split_thread_cpu(before, after):
    """CPU seconds between two `thread_cpu_seconds()` readings, split into
    swiftletd's event loops (threads named swiftlet.loop…) and every other
    thread (for swiftletd mostly the storage thread, which keeps the
    process's name)."""
    split = {"loop": 0.0, "other": 0.0}
    for tid, (name, seconds) in after.items():
        split["loop" if name.startswith("swiftlet.loop") else "other"] += seconds - before.get(tid, (name, 0.0))[1]
    return split


async def measure_offline(server, target, senders, count, run_ids, user=OFFLINE_USER, window=None):
    """Store phase (`count` messages from `senders`, timed in steps of
    `window` messages, or in one), then delivery phase, for the offline
    `user`."""
    run = routing_load.OfflineRun(next(run_ids), senders, f"{user}@{target.domain}", count)
    errors_before, _ = session_errors(senders)
    step = window or count
    steps = []  # (messages, seconds, server CPU seconds) per step
    for first in range(0, count, step):
        end = min(first + step, count)
        cpu, started = server.cpu_seconds(), time.perf_counter()
        await run.store(first, end)
        steps.append((end - first, time.perf_counter() - started, server.cpu_seconds() - cpu))
    store_s, store_cpu = sum(s for _, s, _ in steps), sum(c for _, _, c in steps)
    errors, sample = session_errors(senders)
    conn = await xmpp_load.open_session(target, user, PASSWORD, "offline")
    recipient = routing_load.Session(conn, user, target.domain)
    try:
        cpu, started_ns = server.cpu_seconds(), time.perf_counter_ns()
        await run.deliver(recipient, OFFLINE_DELIVERY_SECONDS)
        deliver_cpu = server.cpu_seconds() - cpu
    finally:
        recipient.close()
    deliver_s = (run.last_received_ns - started_ns) / 1e9 if run.received else float("nan")
    return {
        "server": server.name, "messages": count, "received": run.received,
        "lost": count - run.received, "duplicates": run.duplicates, "stale": run.stale,
        "errors": errors - errors_before + recipient.errors, "error_sample": sample or recipient.first_error,
        "store_s": store_s, "store_msgs_per_s": count / store_s,
        "store_cpu_us_per_msg": store_cpu / count * 1e6,
        "deliver_s": deliver_s, "deliver_msgs_per_s": run.received / deliver_s if run.received else 0.0,
        "deliver_cpu_us_per_msg": deliver_cpu / run.received * 1e6 if run.received else None,
        "store_first_step_msgs_per_s": steps[0][0] / steps[0][1],
        "store_last_step_msgs_per_s": steps[-1][0] / steps[-1][1],
        "store_first_step_cpu_us_per_msg": steps[0][2] / steps[0][0] * 1e6,
        "store_last_step_cpu_us_per_msg": steps[-1][2] / steps[-1][0] * 1e6,
    }


async def measure_server(server, arguments, round_number):
    """One round on a fresh process: every pair count, then offline."""
    senders_names, receiver_names, _ = user_names(arguments)
    run_ids = iter(range(1, 1_000_000))
    target = xmpp_load.Target("127.0.0.1", server.port, servers.DOMAIN, False)
    senders, receivers, results = [], [], {"routing": [], "offline": []}
    server.start()
    try:
        for pairs in arguments.pair_counts:
            benchmark.log(f"round {round_number}: {server.name}, {pairs} pairs")
            senders += await routing_load.open_available(
                target, senders_names[len(senders):pairs], PASSWORD, 16)
            receivers += await routing_load.open_available(
                target, receiver_names[len(receivers):pairs], PASSWORD, 16)
            result = await measure_routing(server, senders, receivers, arguments, run_ids)
            results["routing"].append(dict(result, round=round_number))
        benchmark.log(f"round {round_number}: {server.name}, {arguments.offline} offline messages")
        result = await measure_offline(
            server, target, senders[:OFFLINE_SENDERS], arguments.offline, run_ids, window=arguments.offline_window)
        results["offline"].append(dict(result, round=round_number))
    finally:
        for session in senders + receivers:
            session.close()
        await asyncio.sleep(0.5)  # let the server see the disconnects
        server.stop()
    return results


async def run(arguments, workdir, report, started):
    """Accounts, then the rounds; fills `report`. Servers are appended to
    `started` as soon as they exist, for the caller to stop."""
    chosen = []
    for name in arguments.server_names:
        directory = os.path.join(workdir, name)
        if name in ("swiftletd", "swiftletd-noarchive"):
            chosen.append(RoutingSwiftletd(
                directory, arguments.swiftletd, arguments.swiftletd_threads, arguments.offline,
                archive=name == "swiftletd"))
        elif name == "prosody":
            chosen.append(servers.Prosody(directory))
        elif name == "prosody-mam":
            chosen.append(ProsodyMAM(directory))
        elif ejabberd.available():
            chosen.append(ejabberd.Ejabberd(directory))
        else:
            report["skipped"].append("ejabberd (not installed: apt-get install ejabberd)")
            benchmark.log("ejabberd is not installed; skipped")
    started += chosen
    users = [user for group in user_names(arguments) for user in group]
    for server in chosen:
        benchmark.log(f"creating {len(users)} accounts on {server.name}")
        await create_accounts(server, users)
        if getattr(arguments, "pin", False):
            server.cpus = "1"
        report["versions"][server.name] = server.version()
    for round_number in range(1, arguments.rounds + 1):
        for server in chosen:
            results = await benchmark.with_deadline(
                measure_server(server, arguments, round_number), 300, f"{server.name} round {round_number}")
            report["routing"] += results["routing"]
            report["offline"] += results["offline"]


def median_of(rows, key):
    values = [row[key] for row in rows if row.get(key) is not None]
    return statistics.median(values) if values else None


def ratio(ours, theirs):
    return f"{ours / theirs:.2f}x" if ours and theirs else "n/a"


def report_header(report, names, arguments, settings):
    """The first lines of a report: versions, machine, `settings`."""
    machine = report["machine"]
    return [
        "; ".join(report["versions"][name] for name in names) + f"; swiftletd revision {arguments.revision}",
        f"{machine['date']}; {machine['nproc']} CPUs ({machine['cpu']}); kernel {machine['kernel']}; "
        f"load average {machine['load_average_at_start'][0]:.1f} at start, "
        f"{machine.get('load_average_at_end', [0])[0]:.1f} at end",
        settings,
    ]


def format_tables(report, arguments):
    """Medians per server as Markdown, with swiftletd's ratios to the others."""
    names = [name for name in SERVER_NAMES if name in report["versions"]]
    lines = report_header(report, names, arguments, (
        f"No TLS; chat messages to bare JIDs; window {arguments.window} per pair; {arguments.seconds:g} s of "
        f"sending per cell after {arguments.warmup_seconds:g} s of warm-up; swiftletd threads: "
        f"{arguments.swiftletd_threads}; "
        f"medians of {arguments.rounds} rounds (min-max of messages/s in brackets); "
        f"client event loop: {arguments.event_loop}")) + [
        "",
        "| pairs | server | msgs/s | p50 ms | p99 ms | server CPU µs/msg | server CPU | client CPU "
        "| lost | dup | misrouted | error stanzas |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    medians = {}
    for pairs in arguments.pair_counts:
        for name in names:
            rows = [r for r in report["routing"] if r["server"] == name and r["pairs"] == pairs]
            if not rows:
                continue
            m = {key: median_of(rows, key) for key in (
                "msgs_per_s", "p50_ms", "p99_ms", "server_cpu_us_per_msg", "server_cpu_share", "client_cpu_share")}
            medians[(name, pairs)] = m
            rates = [r["msgs_per_s"] for r in rows]
            lines.append(
                f"| {pairs} | {name} | {m['msgs_per_s']:.0f} ({min(rates):.0f}-{max(rates):.0f}) | "
                f"{m['p50_ms']:.1f} | {m['p99_ms']:.1f} | {m['server_cpu_us_per_msg']:.1f} | "
                f"{m['server_cpu_share']:.0%} | {m['client_cpu_share']:.0%} | "
                f"{sum(r['lost'] + r['warmup_lost'] for r in rows)} | "
                f"{sum(r['duplicates'] + r['warmup_duplicates'] for r in rows)} | "
                f"{sum(r['misrouted'] for r in rows)} | {sum(r['errors'] for r in rows)} |")
        # swiftletd against each other server, and each archiving variant
        # against the same server without it.
        compared = [("swiftletd", other) for other in names if other != "swiftletd"]
        compared += [("prosody-mam", "prosody")] if "prosody-mam" in names else []
        for mine, other in compared:
            ours, theirs = medians.get((mine, pairs)), medians.get((other, pairs))
            if ours and theirs:
                lines.append(
                    f"| {pairs} | **{mine} / {other}** | **{ratio(ours['msgs_per_s'], theirs['msgs_per_s'])}** | "
                    f"{ratio(ours['p50_ms'], theirs['p50_ms'])} | {ratio(ours['p99_ms'], theirs['p99_ms'])} | "
                    f"{ratio(ours['server_cpu_us_per_msg'], theirs['server_cpu_us_per_msg'])} | | | | | | |")
    ours = [name for name in names if name.startswith("swiftletd")]
    if ours:
        lines += [
            "",
            "| pairs | server | server CPU µs/msg | event loop µs/msg | other threads (storage) µs/msg |",
            "|---:|---|---:|---:|---:|",
        ]
        for pairs in arguments.pair_counts:
            for name in ours:
                rows = [r for r in report["routing"] if r["server"] == name and r["pairs"] == pairs]
                if rows:
                    m = {key: median_of(rows, key) or 0 for key in (
                        "server_cpu_us_per_msg", "loop_cpu_us_per_msg", "other_threads_cpu_us_per_msg")}
                    lines.append(
                        f"| {pairs} | {name} | {m['server_cpu_us_per_msg']:.1f} | {m['loop_cpu_us_per_msg']:.1f} | "
                        f"{m['other_threads_cpu_us_per_msg']:.1f} |")
    lines += [
        "",
        f"| offline ({arguments.offline} msgs) | store msgs/s | deliver msgs/s | store CPU µs/msg "
        "| deliver CPU µs/msg | lost | dup | error stanzas |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rows, m in offline_medians(report, names, (
            "store_msgs_per_s", "deliver_msgs_per_s", "store_cpu_us_per_msg", "deliver_cpu_us_per_msg")):
        lines.append(
            f"| {name} | {m['store_msgs_per_s']:.0f} | {m['deliver_msgs_per_s']:.0f} | "
            f"{m['store_cpu_us_per_msg']:.1f} | {m['deliver_cpu_us_per_msg'] or 0:.1f} | "
            f"{sum(r['lost'] for r in rows)} | {sum(r['duplicates'] for r in rows)} | "
            f"{sum(r['errors'] for r in rows)} |")
    if arguments.offline_window:
        window = arguments.offline_window
        last = (arguments.offline - 1) // window * window  # stored before the last step
        lines += [
            "",
            f"| offline store by backlog | msgs/s, first {window} | msgs/s, from {last} stored "
            "| CPU µs/msg, first | CPU µs/msg, last |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, _, m in offline_medians(report, names, (
                "store_first_step_msgs_per_s", "store_last_step_msgs_per_s",
                "store_first_step_cpu_us_per_msg", "store_last_step_cpu_us_per_msg")):
            lines.append(
                f"| {name} | {m['store_first_step_msgs_per_s']:.0f} | {m['store_last_step_msgs_per_s']:.0f} | "
                f"{m['store_first_step_cpu_us_per_msg']:.1f} | {m['store_last_step_cpu_us_per_msg']:.1f} |")
    lines += notes_section(report, report["routing"] + report["offline"], lambda r: (
        f"{r['pairs']} pairs" if "pairs" in r else "offline",
        [(f"{r.get('reordered')} messages overtaken within a pair", r.get("reordered")),
         (f"{r.get('stale')} messages of an earlier run", r.get("stale"))]))
    return "\n".join(lines)


def offline_medians(report, names, keys):
    """(server, its offline rows, the medians of `keys`) for each of
    `names` that has offline rows."""
    for name in names:
        rows = [r for r in report["offline"] if r["server"] == name]
        if rows:
            yield name, rows, {key: median_of(rows, key) for key in keys}


def notes_section(report, rows, remarks_of):
    """Markdown lines noting, per measurement row, what went amiss:
    `remarks_of(row)` gives (where, [(text, shown)]); sending cut short by
    --max-messages and the first error stanza are noted for every row,
    and the servers skipped at the end."""
    notes = []
    for r in rows:
        where, remarks = remarks_of(r)
        remarks = [("reached --max-messages before the time", r.get("reached_max_messages"))] + remarks + [
            (f"first error: {r.get('error_sample')}", r.get("error_sample"))]
        shown = [text for text, present in remarks if present]
        if shown:
            notes.append(f"- {r['server']} round {r['round']}, {where}: " + "; ".join(shown))
    notes += [f"- skipped: {text}" for text in report["skipped"]]
    return ["", "Notes:"] + notes if notes else []


def main():
    benchmark_main("routing", parse_arguments, run, format_tables, lambda arguments: 2 * max(arguments.pair_counts),
                   ("routing", "offline"))


def benchmark_main(name, parse, measure, tables, most_sessions, sections, finish=None):
    """The main of a side-by-side benchmark: `parse()` the options, open
    files enough for `most_sessions(arguments)` client sessions on each
    side, then `measure(arguments, workdir, report, started)` on the
    chosen event loop in a fresh temp dir, with a list per name in
    `sections` in the report. Every server `measure` appended to `started`
    is stopped (also on SIGTERM or an error), the temp dir removed unless
    --keep; then `tables(report, arguments)` is printed, the JSON written
    and `finish(report, arguments)` called if given."""
    if sys.version_info < (3, 11):
        sys.exit(f"{name}.py needs Python 3.11 or later (asyncio.timeout)")
    arguments = parse()
    benchmark.raise_fd_limit(2 * most_sessions(arguments) + 1024)
    report = {"machine": benchmark.machine_description(), "versions": {}, "skipped": [],
              "settings": {key: value for key, value in vars(arguments).items()}}
    report.update({section: [] for section in sections})
    workdir = tempfile.mkdtemp(prefix=f"swiftlet-{name}-")
    started = []
    try:
        if arguments.event_loop == "uvloop":
            import uvloop  # optional (pip install uvloop): a cheaper client loop
            loop_factory = uvloop.new_event_loop
        else:
            loop_factory = None
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(_stop_on_sigterm(measure(arguments, workdir, report, started)))
        report["machine"]["load_average_at_end"] = os.getloadavg()
    except asyncio.CancelledError:
        benchmark.log("stopped by SIGTERM")
        sys.exit(143)
    finally:
        for server in started:
            server.stop()
        if arguments.keep:
            benchmark.log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(tables(report, arguments))
    if arguments.json:
        with open(arguments.json, "w") as output:
            json.dump(report, output, indent=2)
    if finish:
        finish(report, arguments)


async def _stop_on_sigterm(coroutine):
    """Runs `coroutine` so that SIGTERM cancels it and every `finally` on
    the way out runs."""
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    return await coroutine


if __name__ == "__main__":
    main()
