"""The report of curves.py: Markdown tables, each curve's shape, PNG plots.

A curve's shape is the exponent b of a power law y ≈ a·xᵇ fitted by least
squares on log y against log x over its points: below 0.15 it is flat,
up to 0.85 sublinear, up to 1.15 linear, above that superlinear.
"""
import math
import os
import statistics

import benchmark
import routing

COLOURS = {"swiftletd": "tab:blue", "swiftletd-noarchive": "tab:cyan", "prosody": "tab:green",
           "prosody-mam": "tab:green", "ejabberd": "tab:red", "ejabberd-mam": "tab:red"}
MAM_KINDS = ("with", "time window", "after id", "before id")


def exponent(points):
    """b of y ≈ a·xᵇ over [(x, y)] with x, y > 0; None for fewer than two."""
    points = [(math.log(x), math.log(y)) for x, y in points if x and y and x > 0 and y > 0]
    if len({x for x, _ in points}) < 2:
        return None
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def shape(points):
    """'linear (x^1.02)' and the like, or 'n/a'."""
    b = exponent(points)
    if b is None:
        return "n/a"
    name = "flat" if b < 0.15 else "sublinear" if b < 0.85 else "linear" if b <= 1.15 else "superlinear"
    return f"{name} (x^{b:.2f})"


def medians(rows, keys):
    """Rows with the same values at `keys` merged into one (a row per
    round): numbers become their median, anything else the first value."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row.get(key) for key in keys), []).append(row)
    merged = []
    for group in groups.values():
        row = dict(group[0])
        for key, value in row.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and key not in keys:
                row[key] = statistics.median(r[key] for r in group if r.get(key) is not None)
        merged.append(row)
    return merged


def series(rows, name, x_key, y_key, **match):
    """[(x, y)] of server `name`'s rows matching `match`, by x."""
    return sorted((row[x_key], row[y_key]) for row in rows
                  if row["server"] == name and row.get(y_key) is not None
                  and all(row.get(key) == value for key, value in match.items()))


def servers_in(rows):
    return [name for name in COLOURS if any(row["server"] == name for row in rows)]


def number(value, digits=1):
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.{digits}f}"


def percent(share):
    return "n/a" if share is None else f"{share:.0%}"


def idle_section(report):
    rows = medians(report["idle"], ("server", "tls", "target"))
    lines = ["### Idle sessions: RSS", "",
             "| TLS | sessions | server | RSS MiB | KiB/session | RSS after close MiB | failed logins |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for row in sorted(rows, key=lambda r: (r["tls"], r["target"], list(COLOURS).index(r["server"]))):
        lines.append(
            f"| {'STARTTLS' if row['tls'] else 'no'} | {row['sessions']} | {row['server']} | "
            f"{number(row['rss_kib'] / 1024)} | {number(row['kib_per_session'])} | "
            f"{number(row['rss_after_close_kib'] / 1024)} | {row['failed']} |")
    lines += ["", "Shape of the RSS growth over the baseline against sessions:"]
    for name in servers_in(rows):
        for tls in (False, True):
            growth = [(row["sessions"], row["rss_kib"] - row["baseline_kib"]) for row in rows
                      if row["server"] == name and row["tls"] == tls]
            lines.append(f"- {name}, {'STARTTLS' if tls else 'no TLS'}: {shape(growth)}")
    return lines


def sized_section(title, rows, x_key, columns, cells, shape_of):
    """A table with a row per size (`x_key`) and server: `columns` after
    those two, `cells(row)` their text; then each server's curve shape
    under the caption and y key `shape_of`."""
    caption, y_key = shape_of
    lines = [title, "", f"| {x_key} | server | " + " | ".join(columns) + " |",
             "|---:|---|" + "---:|" * len(columns)]
    for row in sorted(rows, key=lambda r: (r[x_key], list(COLOURS).index(r["server"]))):
        lines.append(f"| {row[x_key]} | {row['server']} | " + " | ".join(cells(row)) + " |")
    lines += ["", caption]
    lines += [f"- {name}: {shape(series(rows, name, x_key, y_key))}" for name in servers_in(rows)]
    return lines


def routing_section(report):
    return sized_section(
        "### Routed messages: server CPU per message", medians(report["routing"], ("server", "pairs")), "pairs",
        ("msgs/s", "server CPU µs/msg", "p50 ms", "p99 ms", "client CPU", "lost", "error stanzas"),
        lambda row: (number(row["msgs_per_s"], 0), number(row["server_cpu_us_per_msg"]), number(row["p50_ms"]),
                     number(row["p99_ms"]), percent(row["client_cpu_share"]), str(row["lost"]), str(row["errors"])),
        ("Shape of server CPU per message against pairs (flat: each message costs the same):",
         "server_cpu_us_per_msg"))


def offline_section(report):
    return sized_section(
        "### Offline messages: delivery at login", medians(report["offline"], ("server", "messages")), "messages",
        ("delivery s", "delivered msgs/s", "delivery CPU µs/msg", "store msgs/s", "lost"),
        lambda row: (number(row["deliver_s"], 3), number(row["deliver_msgs_per_s"], 0),
                     number(row["deliver_cpu_us_per_msg"]), number(row["store_msgs_per_s"], 0), str(row["lost"])),
        ("Shape of the delivery time against the backlog (linear: each message costs the same):", "deliver_s"))


def mam_section(report):
    rows = medians(report["mam"], ("server", "size", "kind"))
    fills = [row for row in rows if row["kind"] == "fill"]
    queries = [row for row in rows if row["kind"] != "fill"]
    lines = ["### Message archive: filling, and queries against its size", "",
             "| archive size | server | fill msgs/s | fill CPU µs/msg | filled | archive's own count |",
             "|---:|---|---:|---:|---|---:|"]
    for row in sorted(fills, key=lambda r: (r["size"], list(COLOURS).index(r["server"]))):
        # An incomplete fill started from the largest size reached before.
        reached = row["sent"] + max([other["size"] for other in fills if other["server"] == row["server"]
                                     and other["complete"] and other["size"] < row["size"]], default=0)
        lines.append(
            f"| {row['size']} | {row['server']} | {number(row['fill_msgs_per_s'], 0)} | "
            f"{number(row['fill_cpu_us_per_msg'])} | "
            f"{'yes' if row['complete'] else f'no: {reached} in the time allowed'} | "
            f"{number(row.get('archived'), 0)} |")
    lines += ["", "| archive size | server | " + " | ".join(f"{kind} p50 / p99 ms" for kind in MAM_KINDS)
              + " | results per page | errors |",
              "|---:|---|" + "---:|" * len(MAM_KINDS) + "---:|---:|"]
    by_key = {(row["server"], row["size"], row["kind"]): row for row in queries}
    for size, name in sorted({(row["size"], row["server"]) for row in queries},
                             key=lambda key: (key[0], list(COLOURS).index(key[1]))):
        cells = [by_key.get((name, size, kind)) for kind in MAM_KINDS]
        lines.append(
            f"| {size} | {name} | " + " | ".join(
                f"{number(cell['p50_ms'])} / {number(cell['p99_ms'])}" if cell else "n/a" for cell in cells)
            + " | " + "/".join(number(cell["results_mean"], 0) if cell else "-" for cell in cells)
            + f" | {sum(cell['errors'] for cell in cells if cell)} |")
    lines += ["", "Shape of the median query latency against the archive size (flat: indexed):"]
    for name in servers_in(queries):
        lines.append(f"- {name}: " + "; ".join(
            f"{kind} {shape(series(queries, name, 'size', 'p50_ms', kind=kind))}" for kind in MAM_KINDS))
    samples = sorted({f"{row['server']}: {row['error_sample']}" for row in queries if row.get("error_sample")})
    lines += [f"- first error, {sample}" for sample in samples]
    return lines


def presence_section(report):
    rows = medians(report["presence"], ("server", "contacts"))
    lines = sized_section(
        "### Presence broadcast against roster size", rows, "contacts",
        ("server CPU µs/broadcast", "µs per contact", "last contact p50 ms", "last contact max ms",
         "all copies p50 ms", "subscriptions/s (setup)"),
        lambda row: (number(row["server_cpu_us_per_broadcast"], 0), number(row["server_cpu_us_per_copy"]),
                     number(row["last_p50_ms"], 2), number(row["last_max_ms"], 2), number(row["copy_p50_ms"], 2),
                     number(row["subscriptions_per_s"], 0)),
        ("Shape of server CPU per broadcast against contacts (linear: each contact costs the same):",
         "server_cpu_us_per_broadcast"))
    lines += ["", "Shape of the last contact's latency against contacts:"]
    lines += [f"- {name}: {shape(series(rows, name, 'contacts', 'last_p50_ms'))}" for name in servers_in(rows)]
    return lines


SECTIONS = {"idle": idle_section, "routing": routing_section, "offline": offline_section,
            "mam": mam_section, "presence": presence_section}


def format_tables(report, arguments):
    """Every scenario measured, as Markdown, after the run's header."""
    # One name per version string: the variants run the same programs.
    by_version = {}
    for name in COLOURS:
        if name in report["versions"]:
            by_version.setdefault(report["versions"][name].split(" (archive")[0], name)
    names = list(by_version.values())
    machine = report["machine"]
    lines = routing.report_header(report, names, arguments, (
        f"client pinned to CPU 0 and servers to CPU 1: {'yes' if arguments.pin else 'no'}; "
        f"client event loop: {arguments.event_loop}; rounds: {arguments.rounds} (medians); "
        f"load average (1, 5, 15 min) at start {', '.join(f'{v:.2f}' for v in machine['load_average_at_start'])}"))
    lines += [f"accounts: {row['server']} {row['accounts']} in {row['seconds']:.0f} s" for row in report["accounts"]]
    for scenario in arguments.scenario_names:
        if report[scenario]:
            lines += [""] + SECTIONS[scenario](report)
    if report["failures"] or report["skipped"]:
        lines += ["", "Not measured:"] + [f"- {text}" for text in report["failures"]] + [
            f"- skipped: {text}" for text in report["skipped"]]
    return "\n".join(lines)


def draw_plots(report, arguments):
    """docs/images/perf-<scenario>.png (in --plots) for each scenario
    measured."""
    if arguments.no_plots:
        return
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    os.makedirs(arguments.plots, exist_ok=True)
    plotters = {"idle": plot_idle, "routing": plot_routing, "offline": plot_offline,
                "mam": plot_mam, "presence": plot_presence}
    for scenario in arguments.scenario_names:
        if not report[scenario]:
            continue
        figure = plotters[scenario](pyplot, report)
        path = os.path.join(arguments.plots, f"perf-{scenario}.png")
        figure.tight_layout()
        figure.savefig(path, dpi=100)
        pyplot.close(figure)
        benchmark.log(f"wrote {path}")


def lines_of(axes, rows, x_key, y_key, title, y_label, log_y=False, log_x=True, **match):
    """One line per server on `axes`; linear axes start at 0."""
    for name in servers_in(rows):
        points = series(rows, name, x_key, y_key, **match)
        if points:
            style = "--" if name == "swiftletd-noarchive" else "-"
            axes.plot(*zip(*points), style, marker="o", label=name, color=COLOURS[name])
    if log_x:
        axes.set_xscale("log")
    else:
        axes.set_xlim(left=0)
    if log_y:
        axes.set_yscale("log")
    else:
        axes.set_ylim(bottom=0)
    axes.set_title(title)
    axes.set_ylabel(y_label)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")


def plot_idle(pyplot, report):
    rows = medians(report["idle"], ("server", "tls", "target"))
    for row in rows:
        row["rss_mib"] = row["rss_kib"] / 1024
    figure, grid = pyplot.subplots(2, 2, figsize=(11, 8))
    for column, tls in enumerate((False, True)):
        variant = "STARTTLS" if tls else "no TLS"
        lines_of(grid[0][column], rows, "sessions", "rss_mib", f"RSS, {variant}", "MiB", log_x=False, tls=tls)
        lines_of(grid[1][column], rows, "sessions", "kib_per_session", f"KiB per session, {variant}", "KiB",
                 log_x=False, tls=tls)
        grid[1][column].set_xlabel("idle sessions")
    return figure


def plot_routing(pyplot, report):
    rows = medians(report["routing"], ("server", "pairs"))
    figure, axes = pyplot.subplots(figsize=(8, 5))
    lines_of(axes, rows, "pairs", "server_cpu_us_per_msg", "Server CPU per routed message", "µs per message")
    axes.set_xlabel("online pairs")
    return figure


def plot_offline(pyplot, report):
    rows = medians(report["offline"], ("server", "messages"))
    figure, axes = pyplot.subplots(figsize=(8, 5))
    lines_of(axes, rows, "messages", "deliver_s", "Offline delivery: initial presence to last message",
             "seconds", log_y=True)
    axes.set_xlabel("waiting messages")
    return figure


def plot_mam(pyplot, report):
    rows = [row for row in medians(report["mam"], ("server", "size", "kind")) if row["kind"] != "fill"]
    figure, grid = pyplot.subplots(2, 2, figsize=(11, 8))
    for axes, kind in zip([axes for row in grid for axes in row], MAM_KINDS):
        lines_of(axes, rows, "size", "p50_ms", f"MAM query by {kind}: p50", "ms", log_y=True, kind=kind)
        axes.set_xlabel("archived messages")
    return figure


def plot_presence(pyplot, report):
    rows = medians(report["presence"], ("server", "contacts"))
    figure, grid = pyplot.subplots(1, 2, figsize=(11, 4.5))
    lines_of(grid[0], rows, "contacts", "server_cpu_us_per_broadcast", "Server CPU per presence change",
             "µs", log_y=True)
    lines_of(grid[1], rows, "contacts", "last_p50_ms", "Until the last contact has it (p50)", "ms", log_y=True)
    for axes in grid:
        axes.set_xlabel("online mutual contacts")
    return figure
