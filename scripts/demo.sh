#!/usr/bin/env bash
# The README's demo: record a bundled workload with `tailor record`, print
# the statistics of its trace with `tailor stats`, then simulate the five
# classic dynamic memory managers and seed 002's Table 4 DMM (a spec) on it
# with `tailor simulate`.
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
echo
echo "== tailor simulate $out/$workload.trace --dmm kng,lea,fib,s10,exa,share/dmm/seed002-table4.json"
"$build/bin/tailor" simulate "$out/$workload.trace" --dmm kng,lea,fib,s10,exa,share/dmm/seed002-table4.json
