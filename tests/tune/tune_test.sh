#!/usr/bin/env bash
# `tailor tune` end to end (issue 14). Usage:
#   tune_test.sh TAILOR BIN_DIR CASE
# CASE: memory (tune, install, the config changes what `tailor config --for`
# shows, the budget is honoured), fails, no_alloc, bad_candidate,
# needs_alignment (exact classes refused to a program that needs 16-byte
# alignment), shim (a wrapper that execs the program: the program is tuned).
set -uo pipefail
tailor=$1 bin=$2 case=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export HOME="$dir/home"
mkdir -p "$HOME"
unset TAILOR_CONFIG

case $case in
memory)
  cp "$bin/tune_fragmenting" "$dir/fragmenting"
  start=$(date +%s)
  # What this checks is the memory found, installed and shown, not time: a
  # run of the program lasts 0.08 s and, beside the other tests, a
  # neighbour moves its time by 10-60%, so the time limit is a loose one.
  # --budget 60: glibc's reference rounds (replay and real runs, 7-12x
  # libtailor's time on this program) take about 20 s of it.
  "$tailor" tune --objective memory --budget 60 --max-slowdown 2 --install -o "$dir/out.conf" --work-dir "$dir/work" \
    -- "$dir/fragmenting" >"$dir/out" 2>"$dir/err"
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  cat "$dir/out"
  [ $rc -eq 0 ] || fail "exit status $rc: $(cat "$dir/err")"
  [ $elapsed -le 68 ] || fail "--budget 60 took $elapsed s"
  grep -q "fragmenting: checksum" "$dir/err" "$dir/out" || fail "the program's output did not pass through"
  grep -q "^verdict .* kept" "$dir/out" || fail "no winner on a program that wastes 14% in its size class"
  [ -s "$dir/out.conf" ] || fail "no config written"
  grep -Eq "^(class_spacing|page_size|small_max|middle_max|classes|exact_classes|purge_delay|dmm) = " "$dir/out.conf" || fail "empty config: $(cat "$dir/out.conf")"
  conf="$HOME/.config/tailor/tailor.conf"
  grep -q "^\[program $(readlink -f "$dir/fragmenting")\]" "$conf" || fail "not installed: $(cat "$conf")"
  # What the program gets, with nothing set: the installed section.
  shown=$("$tailor" config --for "$dir/fragmenting")
  echo "$shown"
  grep -q "section: *\[program $(readlink -f "$dir/fragmenting")\]" <<<"$shown" || fail "config --for: no section"
  grep -Eq "(TAILOR_[A-Z_]+ +[^ ]+ +[a-z]+ +program|(dmm|classes|exact): .*\(program\))" <<<"$shown" || fail "config --for: no value from the section"
  # Another program is not affected.
  "$tailor" config --for "$bin/tune_large_churn" | grep -q "section: *(none" || fail "another program got the section"
  # Reinstalling replaces the section instead of adding one.
  # (A candidate of known effect, not the winner: a DMM winner's time on
  # this 0.2 s program is within the noise of the 1.1x limit.)
  printf 'class_spacing = 8\n' >"$dir/spacing8.conf"
  "$tailor" tune --objective memory --no-search --candidate "$dir/spacing8.conf" --runs 7 --budget 40 --max-slowdown 2 \
    --install -o "$dir/out2.conf" \
    -- "$dir/fragmenting" >"$dir/out2" 2>&1 || fail "reinstall: $(cat "$dir/out2")"
  [ -s "$dir/out2.conf" ] || fail "the winner, verified again, was not kept: $(cat "$dir/out2")"
  [ "$(grep -c "^\[program " "$conf")" -eq 1 ] || fail "a second install added a section: $(cat "$conf")"
  # The program runs with the installed config under LD_PRELOAD.
  LD_PRELOAD="$(dirname "$bin")/lib/libtailor.so" "$dir/fragmenting" | grep -q "fragmenting: checksum" || fail "run with the config"
  ;;
fails)
  "$tailor" tune --budget 20 -o "$dir/x.conf" -- false >"$dir/out" 2>"$dir/err"
  rc=$?
  cat "$dir/err"
  [ $rc -eq 2 ] || fail "exit status $rc for a failing command"
  grep -q "false exited with status 1 while it was recorded; nothing tuned, no config written" "$dir/err" || fail "unclear message"
  [ ! -e "$dir/x.conf" ] || fail "a config was written"
  "$tailor" tune --budget 20 -- "$dir/does-not-exist" 2>"$dir/err"
  [ $? -eq 2 ] || fail "a missing command must fail"
  grep -q "does-not-exist: no such executable file" "$dir/err" || fail "unclear message: $(cat "$dir/err")"
  ;;
no_alloc)
  "$tailor" tune --budget 20 -o "$dir/x.conf" -- "$bin/tune_no_alloc" >"$dir/out" 2>"$dir/err"
  rc=$?
  cat "$dir/err"
  [ $rc -eq 2 ] || fail "exit status $rc for a program that does not allocate"
  grep -q "made no allocation call the recorder saw; there is nothing to tune, no config written" "$dir/err" || fail "unclear message"
  [ ! -e "$dir/x.conf" ] || fail "a config was written"
  ;;
bad_candidate)
  printf 'purge_delay = 0\n' >"$dir/bad.conf"
  "$tailor" tune --no-search --candidate "$dir/bad.conf" --budget 60 -o "$dir/x.conf" \
    -- "$bin/tune_large_churn" >"$dir/out" 2>"$dir/err"
  rc=$?
  cat "$dir/out"
  [ $rc -eq 0 ] || fail "exit status $rc: $(cat "$dir/err")"
  grep -q "not kept: slower than default libtailor on the real runs" "$dir/out" || fail "the bad candidate was not refused"
  grep -q "^verdict *default libtailor stays" "$dir/out" || fail "verdict"
  [ ! -e "$dir/x.conf" ] || fail "a config was written for a losing candidate"
  ;;
needs_alignment)
  "$tailor" tune --objective memory --budget 40 -o "$dir/x.conf" --work-dir "$dir/work" \
    -- "$bin/tune_needs_alignment" >"$dir/out" 2>"$dir/err"
  rc=$?
  cat "$dir/out"
  [ $rc -eq 0 ] || fail "exit status $rc: $(cat "$dir/err")"
  grep -q "exact_classes = 24" "$dir/work/exact.conf" || fail "exact classes were not proposed for 24-byte blocks"
  grep -A2 "^  exact-classes" "$dir/out" | grep -q "not kept: the program was killed by signal 11" ||
    fail "the exact classes were not refused for the fault they cause"
  [ ! -e "$dir/x.conf" ] || ! grep -q "exact_classes" "$dir/x.conf" || fail "exact classes written: $(cat "$dir/x.conf")"
  ;;
shim)
  printf '#!/bin/sh\n# a version manager'"'"'s shim: the real program is exec'"'"'d by a shell\nexec "%s" "$@"\n' \
    "$bin/tune_fragmenting" >"$dir/shim"
  chmod +x "$dir/shim"
  "$tailor" tune --objective memory --budget 30 --json -o "$dir/x.conf" -- "$dir/shim" >"$dir/out.json" 2>"$dir/err"
  rc=$?
  [ $rc -eq 0 ] || fail "exit status $rc: $(cat "$dir/err")"
  python3 - "$dir/out.json" "$(readlink -f "$bin/tune_fragmenting")" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
assert j["executable"] == sys.argv[2], (j["executable"], sys.argv[2])
assert "tune_fragmenting" in j["process"], j["process"]
assert j["record"]["calls"] > 1000, j["record"]  # the program's calls, not the shell's
print("tuned", j["process"], "of", j["processes"], "process(es)")
PY
  ;;
*) fail "unknown case $case" ;;
esac
echo PASS
