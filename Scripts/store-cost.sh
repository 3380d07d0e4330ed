#!/bin/bash
# Where the gateway's CPU goes while it ingests under load: perf samples of the ingest suite's SQLite
# (synchronous=FULL) run, 16 emails in flight, sorted into the store's writes (GRDB's writer threads and the
# write path's frames, the fsync included), its reads, the report and the rest. Multiply a share by the run's
# "gateway" CPU per email for milliseconds per email; run it for two builds, alternately, for a ratio.
#
#   Scripts/store-cost.sh [CHECKOUT]     (default: this one; its release gateway-bench and gateway-worker built)
#
# Needs perf (linux-perf) and the right to attach to a process of your own (kernel.perf_event_paranoid <= 1 or root).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "${1:-$here/..}" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$checkout"
.build/release/gateway-bench ingest --messages "${MESSAGES:-9000}" > "$out/bench.out" 2>&1 &
bench=$!
# The SQLite run starts once the PostgreSQL server is up (the next line), then warms up for a second.
until grep -q '^PostgreSQL:' "$out/bench.out" 2>/dev/null; do
    kill -0 $bench 2>/dev/null || { cat "$out/bench.out"; exit 1; }
    sleep 0.02
done
sleep 1.6
perf record -F 1999 -g -p $bench -o "$out/perf.data" -- sleep 3 > /dev/null 2>&1
wait $bench
grep -E '^ingest \(SQLite, synchronous=FULL|^  CPU per email' "$out/bench.out" | head -2
# The store write alone (the SQLite run's breakdown, one email at a time and 16 in flight on fresh stores; an older
# build's bench may not print both), and PostgreSQL with one node in the same run.
grep -E '^  the rest .*store write alone|^  store write of new reservations alone' "$out/bench.out" | head -2 || true
grep -A2 -E '^ingest \(PostgreSQL, 1 node\)' "$out/bench.out" | grep -E '^ingest|^  CPU per email' || true
perf script -i "$out/perf.data" -F comm,tid,ip,sym 2>/dev/null | python3 "$here/store-cost.py"
