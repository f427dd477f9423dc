#!/usr/bin/env bash
# The README's demo: record a bundled workload with `tailor record`, then
# print the statistics of its trace with `tailor stats`.
set -euo pipefail
build=${1:-build}
workload=${DEMO_WORKLOAD:-cfrac}
out="$build/demo"
mkdir -p "$out"

echo "== tailor record: the $workload workload (bench/workloads/$workload.cpp)"
"$build/bin/tailor" record -o "$out/$workload.trace" -- "$build/bin/wl_$workload"
echo
echo "== tailor stats $out/$workload.trace"
"$build/bin/tailor" stats "$out/$workload.trace"
