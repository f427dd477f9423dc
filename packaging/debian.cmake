# The Debian package (included by packaging/CMakeLists.txt): `make package`
# runs CPack on the build tree and gives tailor_<version>_amd64.deb, the whole
# install under /usr, stripped (the .deb must stay small; debug info stays in
# the build tree), its library dependencies found by dpkg-shlibdeps.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tailor)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "tailor")
set(CPACK_PACKAGE_CONTACT "tailor maintainers <tailor@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "record, simulate and tailor memory allocation; libtailor, a fast malloc")
set(CPACK_PACKAGE_DESCRIPTION "tailor records the heap activity of any program, simulates and searches dynamic
memory managers on the traces, replays them on real allocators, and ships libtailor
(a thread-caching malloc), the locality library and the trace library.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libtailor_locality.so needs libtailor.so.0 of this very package (RUNPATH $ORIGIN).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR})
# `tailor replay --alloc mimalloc,jemalloc,tcmalloc` uses these when present.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libmimalloc2.0, libjemalloc2, libtcmalloc-minimal4, pkg-config, cmake")
include(CPack)
