#!/usr/bin/env bash
# Installs the Debian packages tailor needs to build, test and benchmark,
# skipping those already present. Safe to run repeatedly.
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build make pkg-config
  # libraries of the toolkit (never of the allocator core)
  libzstd-dev libxxhash-dev libcli11-dev nlohmann-json3-dev libfmt-dev libdw-dev
  # the recorder's whole call stacks (`tailor record --stacks`): unw_backtrace
  libunwind-dev
  # tests (bash-completion: the completion test; dpkg-dev: dpkg-shlibdeps for `make package`;
  # universal-ctags: the function-length rule, scripts/function_lengths.py)
  libgtest-dev bash-completion dpkg-dev universal-ctags
  # `mpirun -np N tailor search`: the island model over MPI ranks (TAILOR_MPI)
  libopenmpi-dev openmpi-bin
  # man pages, generated from --help at build time
  help2man
  # `tailor report`: Chart.js, inlined in every report at build time; the
  # headless browser its tests open reports in (npm, for its other
  # browser-side libraries: below)
  libjs-chart.js chromium
  # programs the tests record (real programs under the recorder)
  python3 git
  # fuzzing the parsers (fuzz/, tests/fuzz): clang and libFuzzer's runtime
  # (libclang_rt.fuzzer, in libclang-rt-14-dev on Debian 12)
  clang libclang-rt-14-dev
  # peers measured in benchmarks, and the tools that measure them
  heaptrack libmimalloc-dev libjemalloc-dev libgoogle-perftools-dev libbenchmark-dev valgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The report's browser-side libraries from the npm registry, at the versions
# src/report/js/package-lock.json pins (inlined in reports at build time),
# with Debian's npm unless the machine has an npm already (from Node's own
# packages, which Debian's would conflict with).
if ! command -v npm > /dev/null; then
  echo "install-deps: installing npm"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
fi
js="$(dirname "$0")/../src/report/js"
if [ ! -f "$js/node_modules/d3-flame-graph/dist/d3-flamegraph.umd.min.js" ] ||
   [ "$js/package-lock.json" -nt "$js/node_modules/.package-lock.json" ]; then
  echo "install-deps: npm ci in src/report/js"
  (cd "$js" && npm ci --no-audit --no-fund --loglevel=error)
fi
