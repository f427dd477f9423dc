#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `tailor validate` end to end on a recorded workload: every DMM is simulated
# and run for real (the real run must be the DMM, not plain libtailor), the
# table and the JSON say so, and the resident memory simulated is the real
# one exactly (the same code making the same decisions on the same
# addresses, and the same count of pages and state): the default tolerance
# and even 0% pass.
# Usage: validate_test.sh TAILOR WL_CFRAC
set -uo pipefail
tailor=$1 exe=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/tailor-validate.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$tailor" record -o "$dir/t.trace" -- "$exe" --size 4 > /dev/null 2>&1 || fail "record"
"$tailor" validate "$dir/t.trace" --dmm lea,s10,exa --runs 3 --tolerance 1000000 --json > "$dir/ok.json"
rc=$?; [[ $rc -eq 0 ]] || fail "a generous tolerance gave exit status $rc"
python3 - "$dir/ok.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
names = [x["dmm"] for x in d["dmms"]]
assert names == ["kng", "lea", "s10", "exa"], names
for x in d["dmms"]:
    assert x["runs_on"] == x["dmm"], x            # the real run was the DMM
    assert x["simulated"]["memory_usage_bytes"] > 0 and x["real"]["os_high_water_bytes"] > 0, x
    assert x["real"]["os_high_water_bytes"] == x["simulated"]["memory_usage_bytes"], x
    assert x["real"]["held_high_water_bytes"] == x["simulated"]["held_usage_bytes"], x
    assert x["real"]["os_high_water_bytes"] > x["real"]["held_high_water_bytes"], x  # pages and state
    runs = x["real"]["runs_seconds"]                # every round's time; the fastest is compared
    assert len(runs) == 3 and x["real"]["fastest_seconds"] == min(runs), x
    assert sorted(runs)[1] == x["real"]["seconds"], x  # the median
    counts = x["simulated"]["counts"]
    assert counts["calls"] + counts["hits"] > 0 and "steps_lea" in counts, x
kng = d["dmms"][0]["real"]["fastest_seconds"]
for x in d["dmms"]:
    assert abs(x["normalized_to_kng"]["real_time"] - x["real"]["fastest_seconds"] / kng) < 1e-9, x
assert d["within_tolerance"] is True
print("ok: generous tolerance")
PY
"$tailor" validate "$dir/t.trace" --dmm lea --runs 1 --tolerance 0 > "$dir/strict.txt"
rc=$?; [[ $rc -eq 0 ]] || fail "tolerance 0 gave exit status $rc, not 0"
grep -q "memory within 0.00%       yes" "$dir/strict.txt" || fail "the table does not say the tolerance was met"
! grep -q "^median / fastest run" "$dir/strict.txt" || fail "one run has no spread to show"
"$tailor" validate "$dir/t.trace" --dmm lea --runs 2 > "$dir/two.txt" || fail "validate --runs 2"
grep -Eq "^median / fastest run       [0-9]+\.[0-9]{2}-[0-9]+\.[0-9]{2} over the DMMs$" "$dir/two.txt" ||
  fail "two runs: no line of how much the host disturbed them"
# The time: a deliberately wrong model (every step of a Fibonacci buddy a
# microsecond) fails a time tolerance; a missing model file is one line
# naming it, and the simulated time falls back to steps.
python3 - "$dir/wrong.json" <<'PY'
import json, sys
names = ["hits", "kept", "calls", "reads", "writes", "pages", "purges", "zeroed_kib", "misses", "steps_kingsley",
         "steps_lea", "steps_binary_buddy", "steps_fibonacci_buddy", "steps_segregated_lists", "steps_segregated_fit",
         "steps_simple_segregated_storage", "steps_other"]
ns = {n: 0.0 for n in names}
ns["calls"] = 1.0
ns["steps_fibonacci_buddy"] = 1000.0
json.dump({"format": "tailor-time-model", "version": 1, "ns_per_unit": ns}, open(sys.argv[1], "w"))
PY
"$tailor" validate "$dir/t.trace" --dmm fib --runs 1 --time-model "$dir/wrong.json" --time-tolerance 10 > "$dir/wrong.txt"
rc=$?; [[ $rc -eq 3 ]] || fail "a wrong time model within a 10% time tolerance (exit status $rc): $(cat "$dir/wrong.txt")"
grep -q "time within 10.00%         no" "$dir/wrong.txt" || fail "the table does not say the time tolerance was missed"
TAILOR_TIME_MODEL=/nonexistent/model.json "$tailor" validate "$dir/t.trace" --dmm lea --runs 1 > "$dir/steps.txt" 2> "$dir/err"
rc=$?; [[ $rc -eq 0 ]] || fail "a missing model file ended validate ($rc): $(cat "$dir/err")"
[[ $(wc -l < "$dir/err") -eq 1 ]] && grep -q "^tailor: /nonexistent/model.json: cannot be read; simulated time is steps$" "$dir/err" ||
  fail "a missing model file: $(cat "$dir/err")"
grep -q "^sim time    steps" "$dir/steps.txt" || fail "no fall back to steps: $(cat "$dir/steps.txt")"
echo "ok: a wrong time model fails the time tolerance; a missing one falls back to steps"
"$tailor" validate "$dir/t.trace" --dmm glibc --runs 1 2> "$dir/err"; rc=$?
[[ $rc -ne 0 ]] && grep -q "glibc is not a DMM" "$dir/err" || fail "glibc accepted as a DMM"
echo "ok: tolerance 0 met; glibc refused"
# --repeat: the trace three times in a row, simulated and for real, the
# blocks left at the end of a pass freed before the next: memory still
# equal to the byte, and the passes said.
"$tailor" validate "$dir/t.trace" --dmm lea --runs 1 --json > "$dir/once.json" || fail "validate once"
"$tailor" validate "$dir/t.trace" --dmm lea --runs 1 --repeat 3 --tolerance 0 --json > "$dir/thrice.json"
rc=$?; [[ $rc -eq 0 ]] || fail "--repeat 3 at tolerance 0 gave exit status $rc"
python3 - "$dir/once.json" "$dir/thrice.json" <<'PY' || exit 1
import json, sys
once, thrice = (json.load(open(p)) for p in sys.argv[1:3])
assert once["passes"] == 1 and thrice["passes"] == 3, (once["passes"], thrice["passes"])
assert thrice["operations"] >= 3 * once["operations"], (once["operations"], thrice["operations"])
for x in thrice["dmms"]:
    assert x["real"]["os_high_water_bytes"] == x["simulated"]["memory_usage_bytes"], x
    assert x["real"]["held_high_water_bytes"] == x["simulated"]["held_usage_bytes"], x
print("ok: --repeat 3, memory equal")
PY
"$tailor" validate "$dir/t.trace" --dmm lea --runs 1 --repeat-to 1 | grep -q "^trace .*operations)$" ||
  fail "--repeat-to below the trace's length is one pass"
"$tailor" validate "$dir/t.trace" --dmm lea --runs 1 --repeat 2 | grep -q "played 2 times in a row" ||
  fail "the table does not say the passes"
"$tailor" validate "$dir/t.trace" --repeat 2 --repeat-to 10 > /dev/null 2>&1 && fail "--repeat with --repeat-to accepted"
echo "ok: --repeat"
