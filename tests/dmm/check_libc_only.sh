#!/bin/sh
# Fails unless the shared library $1 needs nothing but libc: every undefined
# dynamic symbol versioned GLIBC_* (or one of the weak hooks every C object
# carries), none from the C++ runtime, and no NEEDED library but libc.
set -eu
lib=$1
undefined=$(nm -D --undefined-only "$lib")
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "undefined symbols of $lib:"
echo "$undefined"
echo "needed: $needed"
status=0
not_libc=$(echo "$undefined" | grep -v '@GLIBC_' \
  | grep -Ev ' w (__gmon_start__|_ITM_deregisterTMCloneTable|_ITM_registerTMCloneTable)$' || true)
cxx=$(echo "$undefined" | grep -E '_Z|__gxx|_Unwind|__cxa_(guard|throw|allocate|begin_catch|pure_virtual)' || true)
if [ -n "$not_libc$cxx" ]; then echo "FAIL: not from libc:"; echo "$not_libc$cxx"; status=1; fi
for n in $needed; do
  case $n in
    libc.so.*) ;;
    *) echo "FAIL: needs $n"; status=1 ;;
  esac
done
[ $status -eq 0 ] && echo "libc only"
exit $status
