#!/usr/bin/env bash
# The README's demo: record a bundled workload with `tailor record`, then
# print the statistics of its trace with `tailor stats`.
set -euo pipefail
build=${1:-build}
workload=${DEMO_WORKLOAD:-cfrac}
size=${DEMO_SIZE:-20}   # a quarter of cfrac's default: about 11 M events
out="$build/demo"
mkdir -p "$out"

echo "== tailor record: the $workload workload at size $size (bench/workloads/$workload.cpp)"
"$build/bin/tailor" record -o "$out/$workload.trace" -- "$build/bin/wl_$workload" --size "$size"
echo
echo "== tailor stats $out/$workload.trace"
"$build/bin/tailor" stats "$out/$workload.trace"
