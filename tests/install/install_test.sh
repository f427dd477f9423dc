#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed tailor works like the build tree (docs/install.md): installs
# the build into a scratch prefix and checks that it is complete, that other
# projects build on it (examples/ with find_package and with pkg-config;
# tests/alloc/package with the older target names), that the installed
# `tailor` runs record, stats, simulate, search, replay, validate and report from a directory
# outside the source tree, and that all of it still works after the prefix
# is moved.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tailor-install.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Nothing may be found through the environment or the source tree.
unset TAILOR_DATA_DIR TAILOR_RECORD_LIB TAILOR_REPLAY_DRIVER TAILOR_LIB LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_PATH
export TAILOR_CONFIG=/dev/null

fail() { echo "install_test: $*" >&2; exit 1; }
step() { echo "== $*"; }

prefix=$scratch/prefix
step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > /dev/null

step "the prefix is complete"
for f in bin/tailor lib/libtailor.so lib/libtailor.a lib/libtailor_locality.so lib/libtailor_trace.so \
         lib/tailor/libtailor-record.so libexec/tailor/tailor-replay-driver \
         share/tailor/search/dmm.bnf share/tailor/dmm/kng.json share/tailor/dmm/simulator-paper-table4.json \
         include/tailor/tailor.h include/tailor/locality.h include/tailor/list.h include/tailor/set.h \
         include/tailor/map.h include/tailor/allocator.h include/tailor/locality/heap.h include/tailor/trace.h \
         include/tailor/trace/reader.h lib/pkgconfig/tailor.pc lib/pkgconfig/tailor-locality.pc \
         lib/pkgconfig/tailor-trace.pc lib/cmake/tailor/tailorConfig.cmake \
         share/bash-completion/completions/tailor; do
  [ -e "$prefix/$f" ] || fail "missing from the install: $f"
done
for lib in tailor tailor_locality tailor_trace; do
  soname=$(readelf -d "$prefix/lib/lib$lib.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$soname" = "lib$lib.so.0" ] || fail "lib$lib.so has SONAME '$soname', not lib$lib.so.0"
done
if command -v help2man > /dev/null; then
  for page in tailor tailor-record tailor-stats tailor-simulate tailor-search tailor-replay tailor-validate tailor-report; do
    head -3 "$prefix/share/man/man1/$page.1" | grep -q "^\.TH ${page^^} " || fail "man page $page.1 missing or untitled"
  done
fi

# Builds examples/ and tests/alloc/package against the prefix with CMake and
# with pkg-config, and runs each program, checking what it prints.
build_consumers() {
  local p=$1 out=$2
  cmake -S "$src/examples" -B "$out/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$p" > /dev/null
  cmake --build "$out/cmake" > /dev/null
  cmake -S "$src/tests/alloc/package" -B "$out/alias" -G Ninja -DCMAKE_PREFIX_PATH="$p" > /dev/null
  cmake --build "$out/alias" > /dev/null
  mkdir -p "$out/pc"
  export PKG_CONFIG_PATH="$p/lib/pkgconfig"
  # shellcheck disable=SC2046
  {
    cc -o "$out/pc/near_list" "$src/examples/near_list.c" $(pkg-config --cflags --libs tailor-locality)
    c++ -std=c++20 -o "$out/pc/containers" "$src/examples/containers.cpp" $(pkg-config --cflags --libs tailor-locality)
    c++ -std=c++20 -o "$out/pc/trace_counts" "$src/examples/trace_counts.cpp" $(pkg-config --cflags --libs tailor-trace)
    cc -o "$out/pc/consumer" "$src/tests/alloc/package/consumer.c" $(pkg-config --cflags --libs tailor)
  }
  unset PKG_CONFIG_PATH
}
run_consumers() {
  local p=$1 out=$2 kind
  for kind in cmake pc; do
    local bin=$out/$kind
    # CMake's binaries carry the prefix in their RUNPATH; pkg-config's need the loader told.
    [ $kind = pc ] && export LD_LIBRARY_PATH="$p/lib"
    "$bin/near_list" | grep -qx "near_list: 10000 nodes, sum 49995000, freed with free() on libtailor" ||
      fail "$kind near_list"
    "$bin/containers" | grep -qx "containers: list 4000 elements as std::list, map [0-9]* entries as std::map" ||
      fail "$kind containers"
    unset LD_LIBRARY_PATH
  done
  "$out/alias/consumer" | grep -qx "consumer: malloc is libtailor" || fail "tailor::tailor_alloc consumer"
  LD_LIBRARY_PATH="$p/lib" "$out/pc/consumer" | grep -qx "consumer: malloc is libtailor" || fail "pkg-config consumer"
}

# The installed tailor, from a directory outside the source tree.
run_tailor() {
  local p=$1 out=$2 tailor=$1/bin/tailor
  mkdir -p "$out" && cd "$out"
  "$tailor" --version | grep -Eq '^tailor [0-9]+\.[0-9]+\.[0-9]+ \(commit ' || fail "tailor --version"
  "$tailor" record -q -o w.trace -- sort -n "$src/share/dmm/kng.json" > /dev/null || fail "tailor record"
  "$tailor" stats w.trace --json > stats.json || fail "tailor stats"
  "$out/../consumers/cmake/trace_counts" w.trace > counts.txt || fail "trace_counts"
  python3 - stats.json counts.txt <<'PY' || fail "trace_counts disagrees with tailor stats"
import json, sys
stats = json.load(open(sys.argv[1]))
counts = dict(line.split() for line in open(sys.argv[2]))
assert int(counts["events"]) == stats["events"] and int(counts["events"]) > 0, (counts, stats["events"])
assert int(counts["threads"]) == len(stats["threads"]), (counts, stats["threads"])
PY
  "$tailor" simulate w.trace --dmm kng,lea,"$p/share/tailor/dmm/simulator-paper-table4.json" > simulate.txt ||
    fail "tailor simulate"
  "$tailor" search w.trace --generations 2 --population 6 --seed 1 -o best.json > search.txt || fail "tailor search"
  [ -s best.json ] || fail "tailor search wrote no spec"
  "$tailor" replay w.trace --alloc glibc,libtailor,best.json --runs 1 > replay.txt || fail "tailor replay"
  grep -q libtailor replay.txt || fail "tailor replay did not report libtailor"
  "$tailor" validate w.trace --dmm kng,lea --runs 1 > validate.txt || fail "tailor validate: $(tail -3 validate.txt)"
  grep -q "^memory within" validate.txt || fail "tailor validate printed no verdict"
  "$tailor" report w.trace --dmm kng -o w.html > report.txt || fail "tailor report: $(tail -3 report.txt)"
  grep -q "<canvas" w.html || fail "tailor report wrote no chart"
  cd - > /dev/null
}

check_completion() {
  local p=$1
  local words
  words=$(bash -c 'source /usr/share/bash-completion/bash_completion; source "$1/share/bash-completion/completions/tailor"
    PATH=$1/bin:$PATH
    complete_line() { COMP_LINE=$1; COMP_POINT=${#1}; read -ra COMP_WORDS <<< "$1"; COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                      COMPREPLY=(); _tailor; echo "${COMPREPLY[*]}"; }
    complete_line "tailor se"; complete_line "tailor search --gen"' _ "$p")
  [ "$words" = $'search\n--generations' ] || fail "bash completion gave '$words'"
}

step "examples and the installed tailor"
build_consumers "$prefix" "$scratch/run1/consumers"
run_consumers "$prefix" "$scratch/run1/consumers"
run_tailor "$prefix" "$scratch/run1/work"
check_completion "$prefix"

step "libtailor linked after the C library: the locality library says so"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -o "$scratch/wrong_order" "$src/examples/near_list.c" -Wl,--no-as-needed -lc \
  $(PKG_CONFIG_PATH=$PKG_CONFIG_PATH pkg-config --cflags --libs tailor-locality)
if LD_LIBRARY_PATH="$prefix/lib" "$scratch/wrong_order" > /dev/null 2> "$scratch/wrong_order.err"; then
  fail "near_list linked after libc succeeded"
fi
grep -q "^tailor_locality: libtailor is linked but free() comes from .*libc" "$scratch/wrong_order.err" ||
  fail "no warning from the locality library: $(cat "$scratch/wrong_order.err")"

moved=$scratch/moved/elsewhere
step "mv $prefix $moved"
mkdir -p "$(dirname "$moved")" && mv "$prefix" "$moved"
build_consumers "$moved" "$scratch/run2/consumers"
run_consumers "$moved" "$scratch/run2/consumers"
run_tailor "$moved" "$scratch/run2/work"
check_completion "$moved"
echo "install_test: complete, usable from other projects, relocatable"
