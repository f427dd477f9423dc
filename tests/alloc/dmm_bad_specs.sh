#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A DMM that cannot be set up (TAILOR_DMM naming a missing file, a file that
# is not JSON, a spec that breaks a rule, an unknown name) is reported in
# exactly one line on stderr naming the file and the field, and the program
# runs on libtailor's own heaps with its usual output.
# Usage: dmm_bad_specs.sh LIBTAILOR WL_CFRAC EXPECTED_OUTPUT
set -uo pipefail
lib=$1 exe=$2 expected=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/tailor-badspec.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0

printf '{"allocators": [\n  {"sizes": {"min": 0, "max": 64}, "mechanism": "segregated_fit"\n' > "$dir/cut.json"
printf '{"allocators": [{"sizes": {"min": 0, "max": 64}, "mechanism": "segregated_fit"}]}' > "$dir/uncovered.json"
printf '{"allocators": [{"sizes": {"min": 0}, "mechanism": "treap_of_lists"}]}' > "$dir/mechanism.json"
printf '{"allocators": [{"sizes": {"min": 0}, "mechanism": "segregated_fit", "fit": "worst"}]}' > "$dir/fit.json"
printf '{"allocators": [{"sizes": {"min": 0, "max": 64}, "mechanism": "segregated_fit"}, {"sizes": {"min": 128}, "mechanism": "segregated_fit"}]}' > "$dir/gap.json"

check() {  # check SETTING REGEX
  local setting=$1 want=$2
  env LD_PRELOAD="$lib" TAILOR_DMM="$setting" "$exe" --seed 1 --size 4 > "$dir/out" 2> "$dir/err"
  local rc=$?
  local lines; lines=$(wc -l < "$dir/err")
  if [[ $rc -ne 0 ]] || ! cmp -s "$dir/out" "$expected"; then
    echo "FAIL $setting: the program did not run as usual (exit $rc)"; fails=$((fails + 1))
  elif [[ $lines -ne 1 ]] || ! grep -Eq "$want" "$dir/err"; then
    echo "FAIL $setting: want one line matching '$want' on stderr, got:"; cat "$dir/err"; fails=$((fails + 1))
  else
    echo "ok   $(cat "$dir/err")"
  fi
}

check "$dir/missing.json" "^tailor: TAILOR_DMM=$dir/missing.json: cannot read the file; running on libtailor's own heaps$"
check "$dir/cut.json" "^tailor: TAILOR_DMM=$dir/cut.json: not a JSON spec: line 3, column 1 .*expected"
check "$dir/uncovered.json" "^tailor: TAILOR_DMM=$dir/uncovered.json: allocators\\[0\\].sizes.max: requests above 64 bytes are covered by none"
check "$dir/mechanism.json" "^tailor: TAILOR_DMM=$dir/mechanism.json: allocators\\[0\\].mechanism: unknown mechanism 'treap_of_lists'"
check "$dir/fit.json" "^tailor: TAILOR_DMM=$dir/fit.json: allocators\\[0\\].fit: unknown fit 'worst' \\(known: first, best, exact, farthest\\)"
check "$dir/gap.json" "^tailor: TAILOR_DMM=$dir/gap.json: allocators\\[1\\].sizes.min: sizes \\(64, 128\\] are covered by none"
check "no-such-dmm" "^tailor: TAILOR_DMM=no-such-dmm: unknown DMM \\(built-ins: kng, lea, fib, buddy, s10, exa; or a JSON spec file\\)"
exit $((fails > 0))
