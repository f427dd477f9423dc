#!/bin/sh
# SPDX-License-Identifier: MIT
# The recorder when the trace cannot be written in full: the traced program's
# file size is limited (RLIMIT_FSIZE, SIGXFSZ ignored: write(2) fails with
# EFBIG as it would with ENOSPC on a full disk). The program must run to its
# normal end with its own output and exit status, the recorder must say once
# that it stopped, and the trace must read as a cut trace.
#   record_full_disk.sh TAILOR WL_CFRAC
set -eu
tailor=$1 prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$prog" --seed 1 --size 6 >"$dir/expected"
expected=$dir/expected
for limit_kib in 16 64 256; do
  rm -f "$dir/t.trace"
  # The limit (ulimit -f counts 512-byte blocks in sh) covers the traced
  # program only; its output goes through a pipe
  # (pipes have no size limit), its stderr to a file written by the shell
  # outside the limit.
  status=0
  ( ulimit -f $((limit_kib * 2)); trap '' XFSZ; exec "$tailor" record -o "$dir/t.trace" -- "$prog" --seed 1 --size 6 ) \
    2>"$dir/err" | cat >"$dir/out" || status=$?
  [ "$status" -eq 0 ] || { echo "limit ${limit_kib}K: exit status $status"; cat "$dir/err"; exit 1; }
  cmp -s "$dir/out" "$expected" || { echo "limit ${limit_kib}K: the program's output changed"; exit 1; }
  size=$(stat -c %s "$dir/t.trace")
  [ "$size" -le $((limit_kib * 1024)) ] || { echo "limit ${limit_kib}K: trace of $size bytes"; exit 1; }
  grep -q "cannot write trace" "$dir/err" || { echo "limit ${limit_kib}K: the recorder did not say it stopped"; cat "$dir/err"; exit 1; }
  [ "$(grep -c 'cannot write trace' "$dir/err")" -eq 1 ] || { echo "limit ${limit_kib}K: more than one complaint"; cat "$dir/err"; exit 1; }
  "$tailor" dump "$dir/t.trace" >"$dir/dump" 2>"$dir/dump.err" || { echo "limit ${limit_kib}K: dump failed"; cat "$dir/dump.err"; exit 1; }
  grep -q "trace cut at byte" "$dir/dump.err" || { echo "limit ${limit_kib}K: not read as cut"; cat "$dir/dump.err"; exit 1; }
  events=$(wc -l <"$dir/dump")
  echo "limit ${limit_kib}K: trace of $size bytes, $events events readable; $(cat "$dir/dump.err")"
done
