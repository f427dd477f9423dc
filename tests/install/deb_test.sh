#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages (packaging/debian.cmake), as `make package` makes them:
# tailor_<version>_amd64.deb, at most 5 MB, its library dependencies
# declared and Open MPI not among them, and its tree working where it is
# unpacked (the install is relocatable): `tailor --version` and a search on
# the packaged grammar. In a build with MPI also tailor-mpi_<version>_amd64.deb:
# the MPI plugin alone, depending on tailor and Open MPI, and (where mpirun
# is installed) `mpirun -np 2 tailor search` from the two unpacked together.
# Usage: deb_test.sh BUILD_DIR VERSION
set -euo pipefail
build=$(realpath "$1") version=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tailor-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
unset TAILOR_DATA_DIR TAILOR_RECORD_LIB TAILOR_REPLAY_DRIVER TAILOR_LIB LD_LIBRARY_PATH LD_PRELOAD
fail() { echo "deb_test: $*" >&2; exit 1; }

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$scratch" > "$scratch/cpack.log" 2>&1 ||
  fail "cpack failed: $(tail -20 "$scratch/cpack.log")"
deb=$scratch/tailor_${version}_amd64.deb
[ -f "$deb" ] || fail "no $(basename "$deb"); cpack made: $(ls "$scratch")"
size=$(stat -c %s "$deb")
echo "deb_test: $(basename "$deb") is $size bytes"
((size <= 5 * 1024 * 1024)) || fail "$(basename "$deb") is $size bytes, more than 5 MB"

depends=$(dpkg-deb -f "$deb" Depends)
echo "deb_test: Depends: $depends"
for dep in libc6 libzstd1 libdw1 libstdc++6; do
  [[ $depends == *"$dep"* ]] || fail "Depends lacks $dep: $depends"
done
[[ $depends != *openmpi* ]] || fail "tailor depends on Open MPI (only tailor-mpi should): $depends"

dpkg-deb -x "$deb" "$scratch/root"
usr=$scratch/root/usr
for f in bin/tailor lib/tailor/libtailor-record.so libexec/tailor/tailor-replay-driver share/tailor/search/dmm.bnf \
         include/tailor/locality.h lib/cmake/tailor/tailorConfig.cmake lib/pkgconfig/tailor-trace.pc; do
  [ -e "$usr/$f" ] || fail "the package lacks /usr/$f"
done
if readelf -S "$usr/bin/tailor" | grep -q '\.debug_info'; then fail "/usr/bin/tailor is not stripped"; fi
"$usr/bin/tailor" --version | grep -q "^tailor $version (commit " || fail "tailor --version: $("$usr/bin/tailor" --version)"
cd "$scratch"
TAILOR_CONFIG=/dev/null "$usr/bin/tailor" record -q -o s.trace -- sort /etc/hostname > /dev/null
"$usr/bin/tailor" search s.trace --generations 2 --population 6 -o best.json > /dev/null || fail "packaged tailor search"

mpi_deb=$scratch/tailor-mpi_${version}_amd64.deb
if grep -q '^TAILOR_MPI:BOOL=ON' "$build/CMakeCache.txt"; then
  [ -f "$mpi_deb" ] || fail "a build with MPI made no $(basename "$mpi_deb"); cpack made: $(ls "$scratch")"
  mpi_depends=$(dpkg-deb -f "$mpi_deb" Depends)
  echo "deb_test: $(basename "$mpi_deb"): Depends: $mpi_depends"
  [[ $mpi_depends == *"tailor (= $version)"* && $mpi_depends == *libopenmpi* ]] ||
    fail "tailor-mpi must depend on tailor $version and Open MPI: $mpi_depends"
  files=$(dpkg-deb -c "$mpi_deb" | awk '$1 !~ /^d/ {print $NF}')
  [ "$files" = "./usr/lib/tailor/libtailor-mpi.so" ] || fail "tailor-mpi holds more than the plugin: $files"
  dpkg-deb -x "$mpi_deb" "$scratch/root"
  if mpirun=$(command -v mpirun); then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$mpirun" -np 2 --oversubscribe \
      "$usr/bin/tailor" search s.trace --generations 2 --population 6 > mpi.out 2>&1 ||
      fail "packaged mpirun -np 2 tailor search: $(tail -5 mpi.out)"
  fi
elif [ -f "$mpi_deb" ]; then
  fail "a build without MPI made $(basename "$mpi_deb")"
fi
echo "deb_test: ok"
