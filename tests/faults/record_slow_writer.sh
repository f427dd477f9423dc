#!/bin/sh
# SPDX-License-Identifier: MIT
# The recorder when its writer cannot keep up: the recorder's test build
# (libtailor-record-fault.so) makes every chunk written take
# TAILOR_FAULT_WRITE_DELAY_US more, like a disk far slower than the program.
# The writer thread falls a whole ring behind, so the program's own threads
# must write their oldest buffers themselves (recorder.h). The program must
# run to its normal end with its own output and exit status, nothing may be
# lost (the same events as a recording at full speed, the trace not cut), and
# memory must stay bounded by the rings (peak RSS close to the fast run's).
#   record_slow_writer.sh TAILOR FAULT_RECORDER "DELAY_US..." PROGRAM [ARGS...]
# The delays must make the writer fall behind for the program at hand (a
# program that fills few buffers needs a slower disk): the test fails,
# rather than passes, when the program's threads never had to write.
set -eu
tailor=$1 fault_lib=$2 delays=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$@" >"$dir/expected"

# status, output, peak RSS (KiB) and events of one recording; $1: delay in µs (0: the normal recorder)
record() {
  d=$1
  shift
  status=0
  if [ "$d" -eq 0 ]; then
    /usr/bin/time -f %M -o "$dir/rss" "$tailor" record -o "$dir/t$d.trace" -- "$@" >"$dir/out" 2>"$dir/err" || status=$?
  else
    TAILOR_RECORD_LIB=$fault_lib TAILOR_FAULT_WRITE_DELAY_US=$d \
      /usr/bin/time -f %M -o "$dir/rss" "$tailor" record -o "$dir/t$d.trace" -- "$@" >"$dir/out" 2>"$dir/err" || status=$?
  fi
  [ "$status" -eq 0 ] || { echo "delay $d us: exit status $status"; cat "$dir/err"; exit 1; }
  cmp -s "$dir/out" "$dir/expected" || { echo "delay $d us: the program's output changed"; exit 1; }
  "$tailor" dump --no-time "$dir/t$d.trace" >"$dir/dump" 2>"$dir/dump.err" || { echo "delay $d us: dump failed"; cat "$dir/dump.err"; exit 1; }
  if grep -q "cut" "$dir/dump.err"; then echo "delay $d us: the trace reads as cut"; cat "$dir/dump.err"; exit 1; fi
  rss=$(tail -n 1 "$dir/rss")
  events=$(wc -l <"$dir/dump")
}

record 0 "$@"
fast_rss=$rss fast_events=$events
for delay in $delays; do
  record $delay "$@"
  line=$(grep "slow disk" "$dir/err") || { echo "delay $delay us: the fault recorder was not loaded"; cat "$dir/err"; exit 1; }
  by_program=$(echo "$line" | sed -n 's/.*, \([0-9]*\) by the program.*/\1/p')
  [ "${by_program:-0}" -gt 0 ] || { echo "delay $delay us: the writer kept up ($line): no test"; exit 1; }
  [ "$events" -eq "$fast_events" ] || { echo "delay $delay us: $events events, $fast_events at full speed"; exit 1; }
  [ "$rss" -le $((fast_rss + 16384)) ] || { echo "delay $delay us: peak RSS $rss KiB, $fast_rss KiB at full speed"; exit 1; }
  echo "delay $delay us: $events events as at full speed, peak RSS $rss KiB ($fast_rss at full speed); $line"
done
