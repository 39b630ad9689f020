#!/usr/bin/env python3
"""Growth curves: how the costs of swiftletd, Prosody and ejabberd grow with the load, on this machine, in one run.

Scenarios (--scenarios, run in this order, each server started afresh for
each scenario, servers one after another):
  idle      RSS with 1 k to ~19 k bound idle sessions (as many as the
            open-files limit allows), without TLS and with STARTTLS:
            KiB per session, total RSS, and RSS once they have closed
  routing   server CPU µs per chat message with 50 to 5000 online pairs
            (sender to the receiver's bare JID, --window in flight per
            pair), with swiftletd's archive on and off
  offline   time from initial presence to the last of 100 to 20 000
            offline messages (XEP-0160)
  mam       one user's archive (XEP-0313) filled with 10 k to 1 M messages
            from --mam-peers peers: the fill rate, then p50/p99 latency of
            pages of 50 by `with`, by time window (`start`/`end`), and by
            archive id (RSM `after` and `before`)
  presence  a user with 10 to 1000 mutual contacts, all online, changes
            presence: server CPU per broadcast, time until the last
            contact has it
Each curve's shape (how it grows with the size) is printed with the tables;
plots go to --plots (PNG, needs matplotlib: pip install matplotlib).

The servers:
  swiftletd            swiftletd's defaults (archive on), limits raised
                       to fit the sizes (connections, offline quota)
  swiftletd-noarchive  the same with `archive = off` (routing only)
  prosody              Prosody 0.12 as servers.py runs it (no archive)
  prosody-mam          the same with mod_mam (mam only)
  ejabberd             ejabberd with STARTTLS offered, idle schedulers
                       not busy-waiting, 100 sessions per account
  ejabberd-mam         the same with mod_mam archiving every message
                       (mam only)
With --pin (the default on 2 CPUs or more) this client runs on CPU 0 and
the server on CPU 1, so that they do not take turns on one core.

Accounts are made in-band (XEP-0077) on swiftletd and ejabberd; on Prosody
one with prosodyctl and the others as copies of its account file (same
password, hence the same salt and keys). Rosters are made through the
protocol (subscription handshakes: the contacts have to be online anyway),
but on Prosody as roster files written before it starts: its internal
storage rewrites a user's whole roster file on each change, so 1000
handshakes take minutes.

Usage: curves.py --swiftletd PATH [options]   (see --help)
       curves.py --redraw JSON [--plots DIR]   (tables and plots of a saved run)
"""
import argparse
import asyncio
import importlib.util
import json
import math
import os
import resource
import shutil
import time
import traceback
import types

import benchmark
import curves_report
import ejabberd
import mam_load
import presence_load
import routing
import routing_load
import servers
import xmpp_load

PASSWORD = routing.PASSWORD
SCENARIOS = ("idle", "routing", "offline", "mam", "presence")
SERVER_NAMES = ("swiftletd", "swiftletd-noarchive", "prosody", "prosody-mam", "ejabberd", "ejabberd-mam")
SCENARIO_SERVERS = {
    "idle": ("swiftletd", "prosody", "ejabberd"),
    "routing": ("swiftletd", "swiftletd-noarchive", "prosody", "ejabberd"),
    "offline": ("swiftletd", "prosody", "ejabberd"),
    "mam": ("swiftletd", "prosody-mam", "ejabberd-mam"),
    "presence": ("swiftletd", "prosody", "ejabberd"),
}
#: The sizes of a full run, and of --quick (a few minutes).
FULL_SIZES = {"sessions": "1000,2000,5000,10000,max", "pairs": "50,500,2000,5000",
              "backlogs": "100,1000,5000,20000", "contacts": "10,100,1000", "mam_sizes": "10000,100000,1000000"}
QUICK_SIZES = {"sessions": "500,1000,2000", "pairs": "20,100,400",
               "backlogs": "100,1000,3000", "contacts": "10,100,300", "mam_sizes": "2000,10000"}
#: Open files kept free for everything but the sessions, on each side.
FD_RESERVE = 1000
OFFLINE_SENDERS = routing.OFFLINE_SENDERS
LOGIN_CONCURRENCY = 16
REQUEST_TIMEOUT = 120.0
SUBSCRIBE_TIMEOUT = 600.0  # for each direction of a roster's subscriptions
MAM_BATCH = 20  # messages per peer in flight while filling
BROADCAST_SECONDS = 3.0  # presence changes measured for at least this long
MAX_BROADCASTS = 2000


def parse_arguments():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\nUsage")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    routing.add_server_arguments(parser, SERVER_NAMES, SERVER_NAMES)
    parser.set_defaults(rounds=1)
    routing.add_run_arguments(parser)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"of: {', '.join(SCENARIOS)}")
    parser.add_argument("--quick", action="store_true", help="small sizes (a few minutes), unless given below")
    parser.add_argument("--sessions", help=f"idle session counts; max: what the open-files limit allows "
                                           f"(default {FULL_SIZES['sessions']})")
    parser.add_argument("--pairs", help=f"online pair counts (default {FULL_SIZES['pairs']})")
    parser.add_argument("--window", type=int, default=8, help="messages in flight per pair")
    parser.add_argument("--seconds", type=float, default=5, help="seconds of sending per pair count")
    parser.add_argument("--warmup-seconds", type=float, default=1, help="seconds of sending before each")
    parser.add_argument("--max-messages", type=int, default=1_000_000, help="messages per pair count at most")
    parser.add_argument("--backlogs", help=f"offline backlog sizes (default {FULL_SIZES['backlogs']})")
    parser.add_argument("--contacts", help=f"roster sizes (default {FULL_SIZES['contacts']})")
    parser.add_argument("--broadcasts", type=int, default=20,
                        help="presence changes measured per roster size, at least (more to fill 3 s)")
    parser.add_argument("--mam-sizes", help=f"archive sizes (default {FULL_SIZES['mam_sizes']})")
    parser.add_argument("--mam-peers", type=int, default=100, help="peers the archived messages come from")
    parser.add_argument("--mam-queries", type=int, default=20, help="queries per kind and archive size")
    parser.add_argument("--mam-query-seconds", type=float, default=15,
                        help="seconds per kind and size after which no further query starts")
    parser.add_argument("--mam-fill-seconds", type=float, default=200,
                        help="seconds allowed to grow the archive to each size; a server slower than that "
                             "is not measured at the larger sizes")
    parser.add_argument("--plots", default="docs/images", help="directory for the PNG plots (perf-*.png)")
    parser.add_argument("--no-plots", action="store_true", help="tables and JSON only")
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=None,
                        help="client on CPU 0, servers on CPU 1 (default: on with 2 CPUs or more)")
    arguments = parser.parse_args()
    routing.check_common_arguments(parser, arguments, SERVER_NAMES)
    sizes = QUICK_SIZES if arguments.quick else FULL_SIZES
    for key in sizes:
        if getattr(arguments, key) is None:
            setattr(arguments, key, sizes[key])
    arguments.max_sessions = max_sessions()
    arguments.session_counts = sorted({arguments.max_sessions if count == "max" else int(count)
                                       for count in arguments.sessions.split(",")})
    if arguments.session_counts[-1] > arguments.max_sessions:
        parser.error(f"{arguments.session_counts[-1]} sessions do not fit the open-files limit "
                     f"(at most {arguments.max_sessions})")
    for key, parsed in (("pairs", "pair_counts"), ("backlogs", "backlog_counts"),
                        ("contacts", "contact_counts"), ("mam_sizes", "mam_size_counts")):
        setattr(arguments, parsed, sorted(int(count) for count in getattr(arguments, key).split(",")))
    arguments.scenario_names = arguments.scenarios.split(",")
    unknown = set(arguments.scenario_names) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    if arguments.pin is None:
        arguments.pin = (os.cpu_count() or 1) >= 2
    if not arguments.no_plots and importlib.util.find_spec("matplotlib") is None:
        parser.error("the plots need matplotlib: pip install matplotlib (or run with --no-plots)")
    return arguments


def max_sessions():
    """Idle sessions this client and a server can both hold: each side has
    one socket per session under the same hard open-files limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1_000_000 if hard == resource.RLIM_INFINITY else hard - FD_RESERVE


class CurvesSwiftletd(routing.RoutingSwiftletd):
    """swiftletd as routing.py runs it (offline quota raised to the largest
    backlog), with room for the largest backlog in its output and stream
    management bounds, and for every idle session."""

    def __init__(self, directory, binary, arguments, archive=True):
        super().__init__(directory, binary, 1, max(arguments.backlog_counts), archive)
        with open(self.config_path, "a") as config:
            config.write("offline_quota_size = 64MiB\nsm_max_unacked_size = 80MiB\nmax_queued_output = 80MiB\n"
                         f"max_connections = {arguments.max_sessions + FD_RESERVE}\n")


class CurvesProsody(servers.Prosody):
    """Prosody as servers.py runs it, with the item limit of its internal
    archive stores (10,000 in 0.12), which keep offline messages as well
    as mod_mam's archive, raised above the largest backlog and archive."""

    def __init__(self, directory, arguments):
        super().__init__(directory)
        largest = max(max(arguments.backlog_counts), max(arguments.mam_size_counts))
        with open(self.config_path, "a") as config:
            config.write(f"storage_archive_item_limit = {2 * largest}\n")


class CurvesProsodyMAM(CurvesProsody):
    """With mod_mam, as routing.py's prosody-mam."""

    name = "prosody-mam"
    modules = routing.ProsodyMAM.modules


class CurvesEjabberd(ejabberd.Ejabberd):
    """ejabberd as in ejabberd.py with STARTTLS offered (for the idle
    sessions over TLS), idle schedulers not busy-waiting (so that its CPU
    time counts work), up to 100 sessions per account, and this process's
    open-files limit (for the idle sessions)."""

    starttls = True
    busy_wait = False
    max_user_sessions = 100


class CurvesEjabberdMAM(CurvesEjabberd):
    """With mod_mam archiving every one-to-one message (`default: always`;
    its own default is never), in Mnesia."""

    name = "ejabberd-mam"

    def __init__(self, directory):
        super().__init__(directory)
        with open(os.path.join(directory, "ejabberd.yml"), "a") as config:
            config.write("  mod_mam:\n    default: always\n")


def make_server(name, directory, arguments, report):
    if name.startswith("swiftletd"):
        return CurvesSwiftletd(directory, arguments.swiftletd, arguments, archive=name == "swiftletd")
    if name == "prosody":
        return CurvesProsody(directory, arguments)
    if name == "prosody-mam":
        return CurvesProsodyMAM(directory, arguments)
    if ejabberd.available():
        return CurvesEjabberdMAM(directory) if name == "ejabberd-mam" else CurvesEjabberd(directory)
    report["skipped"].append(f"{name} (not installed: apt-get install ejabberd)")
    benchmark.log(f"{name}: ejabberd is not installed; skipped")
    return None


def common_users(arguments):
    """u0, u1, …: enough for the routing pairs, the rosters, the archive's
    peers, the offline senders, and the idle sessions at 4 per account."""
    count = max(2 * max(arguments.pair_counts), max(arguments.contact_counts), arguments.mam_peers,
                OFFLINE_SENDERS, math.ceil(max(arguments.session_counts) / 4))
    return [f"u{index}" for index in range(count)]


def scenario_users(scenario, arguments):
    users = common_users(arguments)
    return {
        "idle": users,
        "routing": users[:2 * max(arguments.pair_counts)],
        "offline": users[:OFFLINE_SENDERS] + [f"offline{count}" for count in arguments.backlog_counts],
        "mam": users[:arguments.mam_peers] + ["archive0"],
        "presence": users[:max(arguments.contact_counts)] + [f"hub{count}" for count in arguments.contact_counts],
    }[scenario]


async def create_accounts(server, users):
    """In-band registration on a short-lived instance; for Prosody, one
    account with prosodyctl and copies of its account file."""
    if isinstance(server, servers.Prosody):
        server.add_user(users[0], PASSWORD)
        accounts = os.path.join(server.directory, "data", servers.DOMAIN, "accounts")
        template = os.path.join(accounts, f"{users[0]}.dat")
        for user in users[1:]:
            shutil.copyfile(template, os.path.join(accounts, f"{user}.dat"))
        return
    server.start()
    try:
        await xmpp_load.register_accounts(
            server.port, servers.DOMAIN, [(user, PASSWORD) for user in users], streams=4, per_stream=200)
    finally:
        server.stop()


def write_prosody_rosters(server, arguments):
    """The presence scenario's rosters as Prosody's roster files (its
    internal storage), written before it starts: each hub and its contacts
    subscribed both ways. Through the protocol, each subscription rewrites
    the whole roster file, which for 1000 contacts would take minutes."""
    directory = os.path.join(server.directory, "data", servers.DOMAIN, "roster")
    os.makedirs(directory, exist_ok=True)
    contacts = scenario_users("presence", arguments)[:max(arguments.contact_counts)]
    rosters = {}
    for size in arguments.contact_counts:
        rosters[f"hub{size}"] = contacts[:size]
        for contact in contacts[:size]:
            rosters.setdefault(contact, []).append(f"hub{size}")
    for user, items in rosters.items():
        with open(os.path.join(directory, f"{user}.dat"), "w") as roster:
            roster.write("return {\n\t[false] = { [\"version\"] = 1; [\"pending\"] = {}; };\n" + "".join(
                f"\t[\"{item}@{servers.DOMAIN}\"] = {{ [\"subscription\"] = \"both\"; [\"groups\"] = {{}}; }};\n"
                for item in items) + "};\n")


def target_of(server, use_tls=False):
    return xmpp_load.Target("127.0.0.1", server.port, servers.DOMAIN, use_tls, timeout=60.0)


async def close_all(sessions):
    for session in sessions:
        session.close()
    await asyncio.sleep(0.5)  # let the server see the disconnects


async def measure_idle(server, arguments):
    """benchmark.py's idle-session measurement at each count, on a fresh
    process without TLS, then on another with STARTTLS."""
    settings = types.SimpleNamespace(warmup=200, concurrency=LOGIN_CONCURRENCY,
                                     session_counts=arguments.session_counts)
    accounts = [(user, PASSWORD) for user in scenario_users("idle", arguments)]
    rows = []
    for use_tls in (False, True):
        benchmark.log(f"{server.name}: idle sessions ({'STARTTLS' if use_tls else 'no TLS'})")
        server.start()
        try:
            rows += await benchmark.measure_memory(server, use_tls, settings, accounts)
        finally:
            server.stop()
    return rows


async def measure_routing(server, arguments):
    """routing.py's routed-message measurement at each pair count; sender
    i is u(2i), its receiver u(2i+1)."""
    users, target, run_ids = scenario_users("routing", arguments), target_of(server), iter(range(1, 1_000_000))
    senders, receivers, rows = [], [], []
    server.start()
    try:
        for pairs in arguments.pair_counts:
            benchmark.log(f"{server.name}: {pairs} pairs")
            senders += await routing_load.open_available(
                target, users[2 * len(senders):2 * pairs:2], PASSWORD, LOGIN_CONCURRENCY)
            receivers += await routing_load.open_available(
                target, users[2 * len(receivers) + 1:2 * pairs:2], PASSWORD, LOGIN_CONCURRENCY)
            rows.append(await routing.measure_routing(server, senders, receivers, arguments, run_ids))
    finally:
        await close_all(senders + receivers)
        server.stop()
    return rows


async def measure_offline(server, arguments):
    """routing.py's offline measurement for each backlog, each for a user
    of its own."""
    target, run_ids = target_of(server), iter(range(1, 1_000_000))
    server.start()
    senders = []
    try:
        senders = await routing_load.open_available(
            target, scenario_users("offline", arguments)[:OFFLINE_SENDERS], PASSWORD, LOGIN_CONCURRENCY)
        rows = []
        for count in arguments.backlog_counts:
            benchmark.log(f"{server.name}: {count} offline messages")
            rows.append(await routing.measure_offline(server, target, senders, count, run_ids, f"offline{count}"))
    finally:
        await close_all(senders)
        server.stop()
    return rows


async def measure_presence(server, arguments):
    """For each roster size: a hub of its own, subscribed both ways to the
    first contacts (all online), then --broadcasts presence changes."""
    target = target_of(server)
    server.start()
    sessions, rows = [], []
    try:
        contacts = await routing_load.open_available(
            target, scenario_users("presence", arguments)[:max(arguments.contact_counts)], PASSWORD,
            LOGIN_CONCURRENCY)
        sessions += contacts
        for size in arguments.contact_counts:
            benchmark.log(f"{server.name}: roster of {size}")
            hub = (await routing_load.open_available(target, [f"hub{size}"], PASSWORD, 1))[0]
            sessions.append(hub)
            roster = presence_load.Roster(hub, contacts[:size])
            started = time.perf_counter()
            if not isinstance(server, servers.Prosody):  # its rosters are files written beforehand
                await roster.subscribe(SUBSCRIBE_TIMEOUT)
            subscribe_s = time.perf_counter() - started
            await asyncio.sleep(1)  # the presence exchanged after subscribing
            cpu, last, copies = server.cpu_seconds(), [], []
            # At least --broadcasts, and for long enough that the CPU time,
            # counted in clock ticks, is more than a few of them.
            started = time.perf_counter()
            while len(last) < arguments.broadcasts or (
                    time.perf_counter() - started < BROADCAST_SECONDS and len(last) < MAX_BROADCASTS):
                latencies = await roster.broadcast(REQUEST_TIMEOUT)
                last.append(latencies[-1])
                copies += latencies
            cpu = server.cpu_seconds() - cpu
            last.sort()
            copies.sort()
            rows.append({
                "server": server.name, "contacts": size, "broadcasts": len(last),
                "subscribe_s": subscribe_s,
                "subscriptions_per_s": None if isinstance(server, servers.Prosody) else size / subscribe_s,
                "server_cpu_us_per_broadcast": cpu / len(last) * 1e6,
                "server_cpu_us_per_copy": cpu / len(last) / size * 1e6,
                "last_p50_ms": routing.percentile(last, 0.5) / 1e6, "last_max_ms": last[-1] / 1e6,
                "copy_p50_ms": routing.percentile(copies, 0.5) / 1e6,
                "errors": sum(session.errors for session in sessions),
            })
    finally:
        await close_all(sessions)
        server.stop()
    return rows


async def measure_mam(server, arguments):
    """The owner (archive0) online on one session and querying on another
    (never available); the peers send until the archive has each size in
    turn, then the query mix runs at that size."""
    target, peer_names = target_of(server), scenario_users("mam", arguments)[:arguments.mam_peers]
    server.start()
    sessions, rows = [], []
    try:
        owner = (await routing_load.open_available(target, ["archive0"], PASSWORD, 1, resource="fill"))[0]
        peers = await routing_load.open_available(target, peer_names, PASSWORD, LOGIN_CONCURRENCY)
        sessions += [owner] + peers
        querier = mam_load.Querier(await xmpp_load.open_session(target, "archive0", PASSWORD, "query"),
                                   REQUEST_TIMEOUT)
        filled, fills = 0, []
        for size in arguments.mam_size_counts:
            benchmark.log(f"{server.name}: archive of {size}")
            progress = {"sent": 0}
            cpu, started, first_second = server.cpu_seconds(), time.perf_counter(), time.time()
            try:
                await asyncio.wait_for(
                    mam_load.fill(peers, owner.bare_jid, size - filled, MAM_BATCH, filled, progress),
                    arguments.mam_fill_seconds)
            except TimeoutError:
                rows.append(fill_row(server, size, progress["sent"], time.perf_counter() - started,
                                     server.cpu_seconds() - cpu, complete=False))
                break
            rows.append(dict(fill_row(server, size, size - filled, time.perf_counter() - started,
                                      server.cpu_seconds() - cpu, complete=True),
                             archived=await querier.archived()))
            filled = size
            fills.append((first_second, time.time()))
            await asyncio.sleep(1)  # archive writes queued behind the routing
            rows += await query_mix(server, querier, size, peer_names, fills, arguments)
        querier.conn.abort()
    finally:
        await close_all(sessions)
        server.stop()
    return rows


def fill_row(server, size, sent, seconds, cpu, complete):
    return {"server": server.name, "size": size, "kind": "fill", "complete": complete, "sent": sent,
            "fill_s": seconds, "fill_msgs_per_s": sent / seconds if seconds else None,
            "fill_cpu_us_per_msg": cpu / sent * 1e6 if sent else None}


async def query_mix(server, querier, size, peer_names, fills, arguments):
    """Up to --mam-queries queries of each kind (no new one after
    --mam-query-seconds), in the order of QueryMix.KINDS."""
    mix = mam_load.QueryMix([f"{peer}@{servers.DOMAIN}" for peer in peer_names], fills, seed=size)
    rows = []
    for kind in mix.KINDS:
        latencies, results, errors, sample = [], [], 0, None
        deadline = time.perf_counter() + arguments.mam_query_seconds
        for _ in range(arguments.mam_queries):
            if time.perf_counter() > deadline:
                break
            seconds, ids, error = await querier.query(**mix.arguments(kind))
            mix.note(ids)
            latencies.append(seconds)
            results.append(len(ids))
            if error:
                errors += 1
                sample = sample or error
        latencies.sort()
        rows.append({"server": server.name, "size": size, "kind": kind, "queries": len(latencies),
                     "p50_ms": routing.percentile(latencies, 0.5) * 1e3,
                     "p99_ms": routing.percentile(latencies, 0.99) * 1e3,
                     "results_mean": sum(results) / len(results) if results else 0,
                     "errors": errors, "error_sample": sample})
    return rows


MEASURES = {"idle": measure_idle, "routing": measure_routing, "offline": measure_offline,
            "mam": measure_mam, "presence": measure_presence}
#: Seconds a scenario may take on one server beyond its fill allowance.
SCENARIO_SECONDS = 1800


async def run(arguments, workdir, report, started):
    """Accounts on each server, then every scenario on each of its servers,
    for --rounds rounds. A scenario that fails on a server is noted in the
    report and the run goes on."""
    instances = {}
    for name in arguments.server_names:
        scenarios = [scenario for scenario in arguments.scenario_names if name in SCENARIO_SERVERS[scenario]]
        if not scenarios:
            continue
        server = make_server(name, os.path.join(workdir, name), arguments, report)
        if server is None:
            continue
        started.append(server)
        if name == "swiftletd-noarchive" and "swiftletd" in instances:
            # The same accounts: one database, used by one process at a time.
            server.data_dir = instances["swiftletd"].data_dir
        else:
            users = list(dict.fromkeys(
                user for scenario in scenarios for user in scenario_users(scenario, arguments)))
            benchmark.log(f"creating {len(users)} accounts on {server.name}")
            began = time.perf_counter()
            await create_accounts(server, users)  # on every CPU: this is not measured
            if isinstance(server, servers.Prosody) and "presence" in scenarios:
                write_prosody_rosters(server, arguments)
            report["accounts"].append(
                {"server": name, "accounts": len(users), "seconds": time.perf_counter() - began})
        if arguments.pin:
            server.cpus = "1"
        report["versions"][name] = server.version()
        instances[name] = server
    for round_number in range(1, arguments.rounds + 1):
        for scenario in arguments.scenario_names:
            for name in SCENARIO_SERVERS[scenario]:
                server = instances.get(name)
                if server is None:
                    continue
                limit = SCENARIO_SECONDS + arguments.mam_fill_seconds * len(arguments.mam_size_counts)
                try:
                    rows = await benchmark.with_deadline(MEASURES[scenario](server, arguments), limit,
                                                         f"{scenario} on {name}")
                except Exception as error:  # noted; the other scenarios still run
                    benchmark.log(f"{scenario} on {name} failed: {error!r}")
                    traceback.print_exc()
                    report["failures"].append(f"{scenario} on {name}, round {round_number}: {error!r}"[:400])
                    server.stop()
                    continue
                report[scenario] += [dict(row, round=round_number) for row in rows]
                if arguments.json:  # what is measured so far, should the run be stopped
                    with open(arguments.json, "w") as output:
                        json.dump(report, output, indent=2)


def redraw(path, plots):
    """The tables and plots of a run's JSON (--json FILE), without
    measuring: for a run stopped before its end, or plots elsewhere."""
    with open(path) as saved:
        report = json.load(saved)
    arguments = types.SimpleNamespace(**dict(report["settings"], plots=plots, no_plots=False))
    report["machine"].setdefault("load_average_at_end", os.getloadavg())
    print(curves_report.format_tables(report, arguments))
    curves_report.draw_plots(report, arguments)


def main():
    redrawing = argparse.ArgumentParser(add_help=False)
    redrawing.add_argument("--redraw", metavar="JSON")
    redrawing.add_argument("--plots", default="docs/images")
    known, _ = redrawing.parse_known_args()
    if known.redraw:
        redraw(known.redraw, known.plots)
        return

    def parse():
        arguments = parse_arguments()
        if arguments.pin:
            os.sched_setaffinity(0, {0})
        return arguments

    routing.benchmark_main("curves", parse, run, curves_report.format_tables,
                           lambda arguments: max(arguments.session_counts),
                           SCENARIOS + ("accounts", "failures"), curves_report.draw_plots)


if __name__ == "__main__":
    main()
