#!/usr/bin/env bash
# The README's demo: record a bundled workload with `tailor record`, print
# the statistics of its trace with `tailor stats`, then simulate the five
# classic dynamic memory managers and the DMM simulator paper's Table 4 DMM (a spec) on it
# with `tailor simulate`, run a short `tailor search` for a custom DMM, run
# it for real and validate it, and end with `tailor tune --objective memory`
# on a workload: its before/after table and the config it keeps.
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
echo "== tailor simulate $out/$workload.trace --dmm kng,lea,fib,s10,exa,share/dmm/simulator-paper-table4.json"
"$build/bin/tailor" simulate "$out/$workload.trace" --dmm kng,lea,fib,s10,exa,share/dmm/simulator-paper-table4.json
echo
# A short search (the default is 100 generations of 60) on a smaller trace of
# the same workload, so that the demo stays under a minute.
echo "== tailor search: a custom DMM for $workload at size 2 (20 generations of 30)"
"$build/bin/tailor" record -q -o "$out/$workload-small.trace" -- "$build/bin/wl_$workload" --size 2 > /dev/null
"$build/bin/tailor" search "$out/$workload-small.trace" --generations 20 --population 30 -o "$out/$workload-found.json"
echo
# The found DMM for real: libtailor runs it as the program's malloc (the
# simulator's own mechanism code over real pages), then validate compares it
# and the classic DMMs with their simulations.
echo "== the found DMM as $workload's malloc: LD_PRELOAD=libtailor.so TAILOR_DMM=$out/$workload-found.json"
LD_PRELOAD="$build/lib/libtailor.so" TAILOR_DMM="$out/$workload-found.json" "$build/bin/wl_$workload" --size 2 | tail -1
echo
echo "== tailor validate $out/$workload-small.trace --dmm kng,lea,s10,$out/$workload-found.json"
"$build/bin/tailor" validate "$out/$workload-small.trace" --dmm "kng,lea,s10,$out/$workload-found.json" --runs 1
echo
# The whole chain behind one command: tailor tune records the workload,
# proposes size classes from its trace, searches libtailor's tunables (by
# replaying the trace) and DMMs (by the simulator), runs the workload itself
# under glibc, default libtailor and the finalists, and keeps a winner only
# if it beats default libtailor there with the program's output unchanged.
# olden_treeadd keeps a million 24-byte nodes, which libtailor's classes
# round to 32 bytes: a gain to give, at the price the output names.
tune_workload=${DEMO_TUNE_WORKLOAD:-olden_treeadd}
tune_size=${DEMO_TUNE_SIZE:-19}
tune_objective=${DEMO_TUNE_OBJECTIVE:-memory}
rm -f "$out/$tune_workload.conf"
echo "== tailor tune --objective $tune_objective --budget 60: $tune_workload at size $tune_size"
"$build/bin/tailor" tune --objective "$tune_objective" --budget "${DEMO_TUNE_BUDGET:-60}" -o "$out/$tune_workload.conf" \
  -- "$build/bin/wl_$tune_workload" --size "$tune_size"
if [ -f "$out/$tune_workload.conf" ]; then
  echo
  echo "== the config tune wrote ($out/$tune_workload.conf)"
  cat "$out/$tune_workload.conf"
fi
