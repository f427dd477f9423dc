#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a real program twice, without and with LD_PRELOAD=libtailor.so, in the
# same clean scratch directory, and fails unless stdout, stderr and the exit
# status are identical. Usage: run_compare.sh LIBTAILOR NAME
#   NAME: python3 | cmake | git | gxx
set -uo pipefail
lib=$(realpath "$1") name=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tailor-compare.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export LC_ALL=C GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" \
  GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com \
  GIT_CONFIG_NOSYSTEM=1 HOME="$scratch/home"

setup_and_run() {  # runs in $scratch/work, fresh each time
  case $name in
    python3)
      cat > script.py <<'PY'
import collections, json, re, hashlib, threading
words = [f"w{i % 977}-{i * 7919 % 10007}" for i in range(200000)]
counts = collections.Counter(words)
d = {k: [v] * (v % 5) for k, v in counts.items()}
s = json.dumps(d, sort_keys=True)
print(len(s), hashlib.sha256(s.encode()).hexdigest())
print(sum(len(m.group(0)) for m in re.finditer(r"w(\d+)-\1", " ".join(words))))
out = []
def work(k):
    out.append(sum(len(str(x)) for x in range(k * 10000)))
ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(out))
PY
      python3 script.py ;;
    cmake)
      mkdir -p src
      cat > src/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.20)
project(probe C CXX)
include(CheckIncludeFile)
check_include_file(stdlib.h HAVE_STDLIB_H)
add_executable(probe main.c)
message(STATUS "probe configured: ${HAVE_STDLIB_H}")
CM
      echo 'int main(void) { return 0; }' > src/main.c
      cmake -S src -B build -G Ninja 2>&1 | grep -v -E '^-- (Check for working|Detecting|The (C|CXX) compiler)|took|Build files have been written' ;;
    git)
      git init -q repo && cd repo && git config commit.gpgsign false
      for i in $(seq 1 30); do seq 1 $((i * 50)) > "f$((i % 7)).txt"; git add -A; git commit -q -m "commit $i"; done
      git log --stat --format='%H %s' | head -200
      git gc -q && git fsck --full 2>&1 && git diff HEAD~10 --stat && git blame f3.txt | tail -5 ;;
    gxx)
      cat > t.cpp <<'CPP'
#include <map>
#include <string>
#include <vector>
#include <algorithm>
#include <iostream>
template <int N> struct Fib { static constexpr long v = Fib<N - 1>::v + Fib<N - 2>::v; };
template <> struct Fib<0> { static constexpr long v = 0; };
template <> struct Fib<1> { static constexpr long v = 1; };
int main() {
  std::map<std::string, std::vector<int>> m;
  for (int i = 0; i < 100; ++i) m[std::to_string(i % 10)].push_back(i);
  std::cout << m.size() << " " << Fib<60>::v << "\n";
}
CPP
      g++ -std=c++20 -O2 -Wall -c t.cpp -o t.o && g++ t.o -o t && ./t && sha256sum t.o ;;
    *) echo "unknown program $name" >&2; return 99 ;;
  esac
}

run() {  # $1: "" or the library to preload; writes $scratch/$2.{out,err,rc}
  rm -rf "$scratch/work" "$scratch/home" && mkdir -p "$scratch/work" "$scratch/home"
  (cd "$scratch/work" && if [ -n "$1" ]; then export LD_PRELOAD="$1"; fi; setup_and_run) \
    > "$scratch/$2.out" 2> "$scratch/$2.err"
  echo $? > "$scratch/$2.rc"
}

run "" plain
run "$lib" tailor
status=0
for f in out err rc; do
  if ! cmp -s "$scratch/plain.$f" "$scratch/tailor.$f"; then
    echo "run_compare $name: $f differs with libtailor" >&2
    diff "$scratch/plain.$f" "$scratch/tailor.$f" | head -20 >&2
    status=1
  fi
done
[ "$(cat "$scratch/plain.rc")" = 0 ] || { echo "run_compare $name: the plain run failed" >&2; cat "$scratch/plain.err" >&2; status=1; }
[ -s "$scratch/plain.out" ] || { echo "run_compare $name: no output" >&2; status=1; }
exit $status
