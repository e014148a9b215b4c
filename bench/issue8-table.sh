#!/usr/bin/env bash
# Re-measures the rows of README "Performance / Issue 8's table", one run each, with the commands the table names.
# Every row is one ./asymnvm command with --json; its JSON object (or array, for ycsb) goes to OUT/<row>.json and
# the load average before the row to OUT/<row>.load. Ratios are against baselines measured in the same command.
# Run it on a quiet machine (nothing else busy): every extra process on two cores moves the rates by tens of
# percent. Takes about 15 minutes on the 2-core machine.
#   bench/issue8-table.sh [OUT]          (default OUT: target/issue8-table-<UTC time>)
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
out="${1:-$repo/target/issue8-table-$(date -u +%Y%m%dT%H%M%S)}"
mkdir -p "$out"
cli="$repo/asymnvm"

row() {
    local name="$1"
    shift
    uptime > "$out/$name.load"
    echo "== $name: asymnvm $*" >&2
    if ! "$cli" "$@" --json > "$out/$name.json" 2> "$out/$name.err"; then
        echo "   failed (exit $?); see $out/$name.err" >&2
    fi
}

"$cli" --version > /dev/null # builds once, before the first measured row

# goal 1 and 2: cache-hit gets against TreeMap+lock / ConcurrentHashMap, one and two threads. Warm-up as long as
# the measured part: at ~1 M gets/s the default warm-up (a tenth) is 0.1 s, so C2 compiled the get path inside the
# measured second, on the same two cores as the readers (hash, 2 threads: 0.085 µs of JIT per get)
for s in btree hash; do
    for t in 1 2; do
        row "get-$s-${t}t" bench map --structure "$s" --workload c --threads "$t" --ops 3000000 \
            --warmup-ops 3000000 --no-progress
    done
done
# goal 2: updates to disjoint keys, one and two threads (warm JIT: see "Parallel execution")
for s in hash btree; do
    for t in 1 2; do
        row "upd-$s-${t}t" bench map --structure "$s" --workload u --disjoint --threads "$t" --ops 200000 \
            --warmup-ops 400000 --no-progress
    done
done
# workload a, embedded and over tcp
for f in local tcp; do
    for s in hash btree; do
        row "a-$s-$f" bench map --structure "$s" --workload a --fabric "$f" --no-progress
    done
done
# goals 3 and 7: durable puts against the floor and MapDB, and the write amplification
row puts-local-1t bench puts --fabric local --threads 1 --seconds 5
row puts-tcp-1t bench puts --fabric tcp --threads 1 --seconds 5
row puts-local-8t bench puts --fabric local --threads 8 --seconds 5
row puts-tcp-8t bench puts --fabric tcp --threads 8 --seconds 5
row puts-local-hot bench puts --fabric local --threads 1 --seconds 5 --hot-keys
row puts-tcp-hot bench puts --fabric tcp --threads 1 --seconds 5 --hot-keys
# goal 5: commit latency against the raw round trip and the busy-polled loopback round trip
row commit-tcp bench commit --fabric tcp --seconds 5
row commit-tcp-spin bench commit --fabric tcp --seconds 5 --spin
# goal 6: YCSB-A over tcp, the design against naive mode, value checks on
for s in hash btree; do
    for m in asymnvm naive; do
        row "ycsb-a-$s-$m" ycsb --workload a --fabric tcp --structure "$s" --mode "$m" --records 5000 \
            --operations 5000
    done
done
echo "results in $out" >&2
