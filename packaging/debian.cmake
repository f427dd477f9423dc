# The Debian packages (included by packaging/CMakeLists.txt): `make package`
# runs CPack on the build tree and gives tailor_<version>_amd64.deb, the whole
# install under /usr but the MPI plugin, and (in a build with MPI)
# tailor-mpi_<version>_amd64.deb, the plugin that `tailor search` loads under
# mpirun: only that one depends on Open MPI. Stripped (the .debs must stay
# small; debug info stays in the build tree), their library dependencies
# found by dpkg-shlibdeps.
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
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_IGNORE_GROUPS ON)
set(CPACK_COMPONENTS_ALL tailor)
set(CPACK_DEBIAN_TAILOR_PACKAGE_NAME tailor)
if(TAILOR_MPI)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
  set(CPACK_DEBIAN_MPI_PACKAGE_NAME tailor-mpi)
  set(CPACK_DEBIAN_MPI_PACKAGE_SECTION devel)
  set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "tailor (= ${PROJECT_VERSION})")  # dpkg-shlibdeps adds Open MPI's
  set(CPACK_DEBIAN_MPI_PACKAGE_RECOMMENDS "openmpi-bin")  # mpirun
  set(CPACK_DEBIAN_MPI_PACKAGE_SUGGESTS "")
  set(CPACK_DEBIAN_TAILOR_PACKAGE_SUGGESTS "${CPACK_DEBIAN_PACKAGE_SUGGESTS}, tailor-mpi")
  set(CPACK_DEBIAN_MPI_DESCRIPTION "tailor search across MPI ranks (mpirun)
The plugin that `mpirun -np N tailor search` loads: the search for a custom
dynamic memory manager as an island model over MPI ranks, with shared
evaluations and checkpoints.")
endif()
include(CPack)
