#!/usr/bin/env bash
# libtailor under LD_PRELOAD reads the config file's section for the running
# program (by path, else by name) and ignores the others; `tailor config
# --for` shows the same. Usage: program_sections.sh LIBTAILOR SHOW_CONFIG TAILOR
set -euo pipefail
lib=$1 show=$2 tailor=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$show" "$dir/show_config"
exe=$(readlink -f "$dir/show_config")
fail() { echo "FAIL: $*"; exit 1; }

cat > "$dir/tailor.conf" <<CONF
class_spacing = 2
[program other_program]
class_spacing = 1
dmm = lea
[program show_config]
class_spacing = 8
[program $exe]
dmm = kng
CONF
out=$(TAILOR_CONFIG="$dir/tailor.conf" LD_PRELOAD="$lib" "$dir/show_config")
echo "$out"
grep -qx "section=$exe" <<<"$out" || fail "the path's section should win"
grep -qx "dmm=kng source=3 serving=yes" <<<"$out" || fail "the section's DMM should serve malloc"
grep -qx "class_spacing=2 source=2" <<<"$out" || fail "only one section applies; the rest is global"

# By name only, once the path's section is gone.
sed -i "/^\[program \//,\$d" "$dir/tailor.conf"
out=$(TAILOR_CONFIG="$dir/tailor.conf" LD_PRELOAD="$lib" "$dir/show_config")
echo "$out"
grep -qx "section=show_config" <<<"$out" || fail "the name's section should apply"
grep -qx "dmm=(none) source=0 serving=no" <<<"$out" || fail "another program's DMM must not apply"
grep -qx "class_spacing=8 source=3" <<<"$out" || fail "the section's value should win over the global one"

cfg=$(TAILOR_CONFIG="$dir/tailor.conf" "$tailor" config --for "$dir/show_config")
echo "$cfg"
grep -q "section: *\[program show_config\]" <<<"$cfg" || fail "tailor config --for: section"
grep -Eq "TAILOR_CLASS_SPACING +8 +count +program" <<<"$cfg" || fail "tailor config --for: value and source"
cfg=$(TAILOR_CONFIG="$dir/tailor.conf" "$tailor" config)
grep -Eq "TAILOR_CLASS_SPACING +2 +count +file" <<<"$cfg" || fail "tailor config without --for: global lines"
# Classes learned for a program (docs/allocator.md, "Added classes") go
# through the section: tailor config --for shows them, the JSON lists them,
# and another program keeps the default series.
cat >> "$dir/tailor.conf" <<CONF
classes = 144,208
exact_classes = 24
CONF
cfg=$(TAILOR_CONFIG="$dir/tailor.conf" "$tailor" config --for "$dir/show_config")
grep -q "^classes: *144,208 (program)" <<<"$cfg" || fail "tailor config --for: learned classes: $cfg"
grep -q "^exact: *24 (program)" <<<"$cfg" || fail "tailor config --for: exact classes: $cfg"
TAILOR_CONFIG="$dir/tailor.conf" "$tailor" config --for "$dir/show_config" --json |
  python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["classes"]["value"] == [144, 208] and j["exact_classes"]["value"] == [24], j'
TAILOR_CONFIG="$dir/tailor.conf" "$tailor" config | grep -q "^classes: *(the default series)" || fail "classes outside the section"
if "$tailor" config --for "$dir/no-such-program" 2>"$dir/err"; then fail "a missing program must be an error"; fi
grep -q "no-such-program: no such executable file" "$dir/err" || fail "unclear error: $(cat "$dir/err")"
echo "PASS"
