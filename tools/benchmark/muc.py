#!/usr/bin/env python3
"""Group chat (XEP-0045): swiftletd, Prosody and ejabberd on this machine, in one run.

For each server, in rounds (swiftletd, Prosody, ejabberd, …), each round on
a freshly started process, without TLS: as many users as the largest room
log in and send initial presence; then, for each room size in ascending
order, more of them join one room (the first creates it and submits the
empty form: an instant room) until it has that many occupants, and
`--senders` of them send groupchat messages to the room, keeping
`--window` messages each in flight (a message is done when its echo
reaches its sender) or, with `--rate`, at that many messages per second
each, for `--seconds` after a warm-up. Reported per server and size:
  - delivered stanzas per second: every occupant's copy counts;
  - server CPU per delivered stanza (utime+stime from /proc);
  - end-to-end latency p50/p99, measured at every receiver;
  - RSS per occupant: RSS right after the joins of that size, minus RSS
    with every user logged in and none in the room, over the occupants;
  - the load generator's own CPU share (of one core), to show when the
    client rather than the server was the limit.
Every message must reach every occupant exactly once (the sender's echo
included); copies missing or doubled are counted and listed.

Archiving: each room's service discovery is asked for urn:xmpp:mam:2, the
copies the senders get are searched for a <stanza-id> by the room, and at the end
the room's archive is asked for its count (XEP-0313 with RSM).
The servers to choose from:
  swiftletd            swiftletd's defaults (one-to-one archive on; rooms
                       archived if this build does it, which is reported)
  swiftletd-noarchive  the same binary with `archive = off`
  prosody              Prosody with its MUC component, no room archive
  prosody-mam          the same plus mod_muc_mam, archiving every room
  ejabberd             ejabberd with mod_muc, no room archive
  ejabberd-mam         the same plus mod_mam, every room archived (mam: true)
Room limits are raised so that the largest room fits (swiftletd's
muc_max_occupants, ejabberd's max_users; Prosody 0.12 has no limit); room
history stays at 20 messages on all three.

Usage: muc.py --swiftletd PATH [options]   (see --help)
"""
import argparse
import asyncio
import os

import benchmark
import ejabberd
import muc_load
import routing
import routing_load
import servers
import xmpp_load

SERVER_NAMES = ("swiftletd", "swiftletd-noarchive", "prosody", "prosody-mam", "ejabberd", "ejabberd-mam")
DEFAULT_SERVERS = ("swiftletd", "prosody", "prosody-mam", "ejabberd", "ejabberd-mam")
SERVICE = f"conference.{servers.DOMAIN}"
DRAIN_SECONDS = 15  # after sending stops, for the copies in flight
SETTLE_SECONDS = 1.0  # before reading RSS
REQUEST_TIMEOUT = 30.0


def parse_arguments():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\nUsage")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    routing.add_common_arguments(parser, SERVER_NAMES, DEFAULT_SERVERS, seconds=10, warmup_seconds=2)
    parser.add_argument("--occupants", default="10,100,500", help="room sizes, ascending")
    parser.add_argument("--senders", type=int, default=5, help="occupants sending messages")
    parser.add_argument("--window", type=int, default=4,
                        help="messages in flight per sender (closed loop on the sender's echo)")
    parser.add_argument("--rate", type=float, default=0,
                        help="messages per second per sender instead of a window (open loop)")
    arguments = parser.parse_args()
    arguments.sizes = [int(count) for count in arguments.occupants.split(",")]
    if arguments.sizes != sorted(arguments.sizes) or arguments.sizes[0] < max(1, arguments.senders):
        parser.error("--occupants must be ascending and at least --senders")
    routing.check_common_arguments(parser, arguments, SERVER_NAMES)
    return arguments


class MUCSwiftletd(routing.RoutingSwiftletd):
    """swiftletd as routing.py runs it, with room limits that fit the
    largest room."""

    def __init__(self, directory, binary, threads, largest, archive=True):
        super().__init__(directory, binary, threads, 1000, archive)
        with open(self.config_path, "a") as config:
            config.write(f"muc_max_occupants = {max(200, largest)}\n")


PROSODY_MUC = """\
Component "{service}" "muc"
  modules_enabled = {{ {modules} }}
  muc_log_all_rooms = true  -- with muc_mam: every room, whatever its config
"""


class MUCProsody(servers.Prosody):
    """Prosody as in servers.py plus its MUC component (defaults: history
    of 20 messages, no occupant limit in 0.12, new rooms locked until the
    owner configures them)."""

    name = "prosody"
    component_modules = ()

    def __init__(self, directory):
        super().__init__(directory)
        with open(self.config_path, "a") as config:
            config.write(PROSODY_MUC.format(
                service=SERVICE, modules=", ".join(f'"{module}"' for module in self.component_modules)))


class MUCProsodyMAM(MUCProsody):
    """With mod_muc_mam (XEP-0313 for rooms): every groupchat message kept
    in the room's archive, in the same internal (file) storage."""

    name = "prosody-mam"
    component_modules = ("muc_mam",)


EJABBERD_MUC = """\
  mod_muc:
    host: "{service}"
    access: all
    access_create: all
    access_persistent: all
    max_users: {max_users}
    default_room_options:
      max_users: {max_users}
      mam: {mam}
"""


class MUCEjabberd(ejabberd.Ejabberd):
    """ejabberd as in ejabberd.py plus mod_muc (defaults but for the room
    size limit, 200, raised to fit; history 20 messages)."""

    name = "ejabberd"
    mam = False

    def __init__(self, directory, largest):
        super().__init__(directory)
        with open(os.path.join(directory, "ejabberd.yml"), "a") as config:
            config.write(EJABBERD_MUC.format(
                service=SERVICE, max_users=max(200, largest), mam="true" if self.mam else "false"))
            if self.mam:
                # Rooms archive with mam: true; users' own archives keep
                # their default (never), as the others archive no chat here.
                config.write("  mod_mam: {}\n")


class MUCEjabberdMAM(MUCEjabberd):
    """With mod_mam and every room archiving (Mnesia storage)."""

    name = "ejabberd-mam"
    mam = True


def make_server(name, directory, arguments, report):
    largest = max(arguments.sizes)
    if name.startswith("swiftletd"):
        return MUCSwiftletd(directory, arguments.swiftletd, arguments.swiftletd_threads, largest,
                            archive=name == "swiftletd")
    if name == "prosody":
        return MUCProsody(directory)
    if name == "prosody-mam":
        return MUCProsodyMAM(directory)
    if ejabberd.available():
        return MUCEjabberdMAM(directory, largest) if name == "ejabberd-mam" else MUCEjabberd(directory, largest)
    report["skipped"].append(f"{name} (not installed: apt-get install ejabberd)")
    benchmark.log(f"{name}: ejabberd is not installed; skipped")
    return None


async def measure_room(server, room, occupants, arguments, run_ids):
    """A warm-up run, then the measured one, in the room as it is."""
    senders = occupants[:arguments.senders]
    per_sender = max(1, arguments.max_messages // arguments.senders)
    warmup = muc_load.MUCRun(next(run_ids), room, senders, occupants, arguments.window, arguments.rate, per_sender)
    await warmup.run(arguments.warmup_seconds, DRAIN_SECONDS)
    warmup.detach(occupants)
    errors_before, _ = routing.session_errors(occupants)
    run = muc_load.MUCRun(next(run_ids), room, senders, occupants, arguments.window, arguments.rate, per_sender)
    server_cpu, client_cpu = server.cpu_seconds(), benchmark.client_cpu_seconds()
    threads_before = server.thread_cpu_seconds()
    await run.run(arguments.seconds, DRAIN_SECONDS)
    server_cpu = server.cpu_seconds() - server_cpu
    threads = routing.split_thread_cpu(threads_before, server.thread_cpu_seconds())
    client_cpu = benchmark.client_cpu_seconds() - client_cpu
    run.detach(occupants)
    wall = (run.last_received_ns - run.started_ns) / 1e9
    errors, sample = routing.session_errors(occupants)
    latencies = sorted(run.latencies_ns)
    delivered = run.received

    def per_stanza(seconds):
        return seconds / delivered * 1e6 if delivered else None

    return {
        "server": server.name, "occupants": len(occupants), "senders": len(senders),
        "sent": run.total_sent, "expected": run.expected, "delivered": delivered, "lost": run.lost,
        "duplicates": run.duplicates, "stale": run.stale, "foreign": run.foreign,
        "losses_by_occupant": {str(index): missing for index, missing in run.losses().items()},
        "warmup_sent": warmup.total_sent, "warmup_lost": warmup.lost, "warmup_duplicates": warmup.duplicates,
        "room_stanza_ids": run.room_stanza_ids, "sender_copies": run.sender_copies,
        "reached_max_messages": not run.stopped, "errors": errors - errors_before, "error_sample": sample,
        "sending_s": run.sending_s, "wall_s": wall,
        "sent_per_s": run.total_sent / run.sending_s if run.sending_s else 0.0,
        "delivered_per_s": delivered / wall if wall > 0 else 0.0,
        "p50_ms": routing.percentile(latencies, 0.50) / 1e6, "p99_ms": routing.percentile(latencies, 0.99) / 1e6,
        "server_cpu_s": server_cpu, "server_cpu_us_per_stanza": per_stanza(server_cpu),
        "loop_cpu_us_per_stanza": per_stanza(threads["loop"]),
        "other_threads_cpu_us_per_stanza": per_stanza(threads["other"]),
        "server_cpu_share": server_cpu / wall if wall > 0 else None,
        "client_cpu_share": client_cpu / wall if wall > 0 else None,
    }


async def measure_server(server, arguments, round_number, users):
    """One round on a fresh process: every user logged in and available,
    then each room size in turn in one room."""
    run_ids = iter(range(1, 1_000_000))
    target = xmpp_load.Target("127.0.0.1", server.port, servers.DOMAIN, False)
    room = f"bench{round_number}@{SERVICE}"
    sessions, results = [], []
    server.start()
    try:
        benchmark.log(f"round {round_number}: {server.name}, {len(users)} logins")
        sessions = await routing_load.open_available(target, users, routing.PASSWORD, 16)
        await asyncio.sleep(SETTLE_SECONDS)
        rss_before, _ = server.memory_kib()
        archive = {"server": server.name, "round": round_number}
        joined = 0
        for size in arguments.sizes:
            benchmark.log(f"round {round_number}: {server.name}, {size} occupants")
            if joined == 0:
                await muc_load.create_room(sessions[0], room, users[0], REQUEST_TIMEOUT)
                archive["room_features"] = await muc_load.room_features(sessions[0], room, REQUEST_TIMEOUT)
                joined = 1
            await muc_load.join_all(sessions[joined:size], room, users[joined:size], 16, REQUEST_TIMEOUT)
            joined = size
            await asyncio.sleep(SETTLE_SECONDS)
            rss, _ = server.memory_kib()
            result = await measure_room(server, room, sessions[:size], arguments, run_ids)
            result.update(round=round_number, rss_before_kib=rss_before, rss_joined_kib=rss,
                          rss_kib_per_occupant=(rss - rss_before) / size)
            results.append(result)
        archive["messages_sent"] = sum(r["sent"] + r["warmup_sent"] for r in results)
        archive["archive_count"] = await muc_load.archived_count(sessions[0], room, REQUEST_TIMEOUT)
        archive["stanza_ids"] = sum(r["room_stanza_ids"] for r in results)
        archive["sender_copies"] = sum(r["sender_copies"] for r in results)
    finally:
        for session in sessions:
            session.close()
        await asyncio.sleep(0.5)  # let the server see the disconnects
        server.stop()
    return results, archive


async def run(arguments, workdir, report, started):
    """Accounts, then the rounds; fills `report`. Servers are appended to
    `started` as soon as they exist, for the caller to stop."""
    users = [f"occupant{i}" for i in range(max(arguments.sizes))]
    chosen = await routing.prepare_servers(arguments, workdir, report, started, make_server, users)
    for round_number in range(1, arguments.rounds + 1):
        for server in chosen:
            results, archive = await benchmark.with_deadline(
                measure_server(server, arguments, round_number, users), 900, f"{server.name} round {round_number}")
            report["muc"] += results
            report["archive"].append(archive)


def archive_summary(report, name):
    """What the server archived of the rooms, over the rounds."""
    rows = [row for row in report["archive"] if row["server"] == name]
    if not rows:
        return "n/a"
    mam = all("urn:xmpp:mam:2" in row.get("room_features", ()) for row in rows)
    ids = sum(row["stanza_ids"] for row in rows)
    copies = sum(row["sender_copies"] for row in rows)
    counts = [(row["archive_count"], row["messages_sent"]) for row in rows]
    stored = ("no archive query answered" if all(count is None for count, _ in counts) else
              "archive count / sent: " + ", ".join(f"{count}/{sent}" for count, sent in counts))
    return (f"room lists urn:xmpp:mam:2: {'yes' if mam else 'no'}; "
            f"stanza-id by the room on {ids} of the {copies} copies the senders got; {stored}")


def format_tables(report, arguments):
    """Medians per server and room size as Markdown, with swiftletd's
    ratios to the others."""
    names = [name for name in SERVER_NAMES if name in report["versions"]]
    load = (f"{arguments.rate:g} messages/s per sender (open loop)" if arguments.rate
            else f"window {arguments.window} per sender (closed loop on the echo)")
    lines = routing.report_header(report, names, arguments, (
        f"No TLS; one room; {arguments.senders} senders, {load}; {arguments.seconds:g} s of sending per "
        f"cell after {arguments.warmup_seconds:g} s of warm-up; swiftletd threads: {arguments.swiftletd_threads}; "
        f"medians of {arguments.rounds} rounds (min-max of delivered/s in brackets); "
        f"client event loop: {arguments.event_loop}")) + [
        "",
        "| occupants | server | delivered/s | sent/s | server CPU µs/delivered | p50 ms | p99 ms "
        "| RSS KiB/occupant | server CPU | client CPU | lost | dup | error stanzas |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    keys = ("delivered_per_s", "sent_per_s", "server_cpu_us_per_stanza", "p50_ms", "p99_ms",
            "rss_kib_per_occupant", "server_cpu_share", "client_cpu_share")
    medians = {}
    for size in arguments.sizes:
        for name in names:
            rows = [r for r in report["muc"] if r["server"] == name and r["occupants"] == size]
            if not rows:
                continue
            m = {key: routing.median_of(rows, key) for key in keys}
            medians[(name, size)] = m
            rates = [r["delivered_per_s"] for r in rows]
            lines.append(
                f"| {size} | {name} | {m['delivered_per_s']:.0f} ({min(rates):.0f}-{max(rates):.0f}) | "
                f"{m['sent_per_s']:.0f} | {m['server_cpu_us_per_stanza'] or 0:.2f} | {m['p50_ms']:.1f} | "
                f"{m['p99_ms']:.1f} | {m['rss_kib_per_occupant']:.1f} | {m['server_cpu_share']:.0%} | "
                f"{m['client_cpu_share']:.0%} | {sum(r['lost'] + r['warmup_lost'] for r in rows)} | "
                f"{sum(r['duplicates'] + r['warmup_duplicates'] for r in rows)} | {sum(r['errors'] for r in rows)} |")
        for other in names:
            ours, theirs = medians.get(("swiftletd", size)), medians.get((other, size))
            if other != "swiftletd" and ours and theirs:
                lines.append(
                    f"| {size} | **swiftletd / {other}** | **{routing.ratio(ours['delivered_per_s'], theirs['delivered_per_s'])}** | "
                    f"| **{routing.ratio(ours['server_cpu_us_per_stanza'], theirs['server_cpu_us_per_stanza'])}** | "
                    f"{routing.ratio(ours['p50_ms'], theirs['p50_ms'])} | {routing.ratio(ours['p99_ms'], theirs['p99_ms'])} | "
                    f"{routing.ratio(ours['rss_kib_per_occupant'], theirs['rss_kib_per_occupant'])} | | | | | |")
    archiving = [name for name in ("prosody-mam", "ejabberd-mam") if name in names]
    if "swiftletd" in names and archiving:
        lines += ["", "Goal: swiftletd's server CPU per delivered stanza at most 1/5 of the better of "
                  + " and ".join(archiving) + ":", ""]
        for size in arguments.sizes:
            ours = medians.get(("swiftletd", size))
            theirs = [medians[(name, size)]["server_cpu_us_per_stanza"] for name in archiving if (name, size) in medians]
            if ours and theirs:
                share = ours["server_cpu_us_per_stanza"] / min(theirs)
                lines.append(f"- {size} occupants: {share:.2f} of the better ({'met' if share <= 0.2 else 'not met'})")
    lines += ["", "Archiving of the rooms:", ""]
    lines += [f"- {name}: {archive_summary(report, name)}" for name in names]
    if any(name.startswith("swiftletd") for name in names):
        lines += ["", "| occupants | server | server CPU µs/delivered | event loop | other threads |",
                  "|---:|---|---:|---:|---:|"]
        for size in arguments.sizes:
            for name in (name for name in names if name.startswith("swiftletd")):
                rows = [r for r in report["muc"] if r["server"] == name and r["occupants"] == size]
                if rows:
                    m = {key: routing.median_of(rows, key) or 0 for key in (
                        "server_cpu_us_per_stanza", "loop_cpu_us_per_stanza", "other_threads_cpu_us_per_stanza")}
                    lines.append(f"| {size} | {name} | {m['server_cpu_us_per_stanza']:.2f} | "
                                 f"{m['loop_cpu_us_per_stanza']:.2f} | {m['other_threads_cpu_us_per_stanza']:.2f} |")
    lines += routing.notes_section(report, report["muc"], lambda r: (f"{r['occupants']} occupants", [
        (f"{r['lost']} copies lost, by occupant index: {r['losses_by_occupant']}", r["lost"]),
        (f"{r['warmup_lost']} copies lost in the warm-up", r["warmup_lost"]),
        (f"{r['duplicates']} duplicate copies", r["duplicates"]),
        (f"{r['stale']} copies of an earlier run", r["stale"])]))
    return "\n".join(lines)


def main():
    routing.benchmark_main("muc", parse_arguments, run, format_tables, lambda arguments: max(arguments.sizes),
                           ("muc", "archive"))


if __name__ == "__main__":
    main()
