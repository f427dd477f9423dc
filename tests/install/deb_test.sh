#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package (packaging/debian.cmake), as `make package` makes it:
# named tailor_<version>_amd64.deb, at most 5 MB, its library dependencies
# declared, and its tree working where it is unpacked (the install is
# relocatable): `tailor --version` and a search on the packaged grammar.
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
echo "deb_test: ok"
