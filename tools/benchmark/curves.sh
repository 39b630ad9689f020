#!/usr/bin/env bash
# Builds swiftletd in release, then measures how costs grow with the load
# on it, on Prosody and on ejabberd (both from the system packages) on this
# machine: RSS against idle sessions, CPU per routed message against
# online pairs, offline delivery time against the backlog, archive (MAM)
# query latency against the archive's size, presence broadcast cost
# against roster size. Prints Markdown tables, writes PNG plots to
# docs/images/perf-*.png (matplotlib: pip install matplotlib) and, with
# --json FILE, the figures. Options are passed to curves.py (see --help);
# --quick runs small sizes in a few minutes. The build's scratch dir is
# .build unless SWIFTLET_BENCH_SCRATCH says otherwise. The run is stopped
# after 100 minutes at most (a full one takes about 45).
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=curves.sh
. tools/benchmark/common.sh
need taskset
python3 -c 'import matplotlib' 2>/dev/null || {
    echo "$bench: matplotlib not installed (pip install matplotlib), needed for the plots; or pass --no-plots" >&2
    case " $* " in *" --no-plots "*) ;; *) exit 69 ;; esac
}
side_by_side 6000 curves.py "$@"
