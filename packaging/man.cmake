# Man pages (included by packaging/CMakeLists.txt): tailor(1) and one per
# subcommand, tailor-SUBCOMMAND(1), generated at build time from `--help` by
# help2man (man_page.cmake), so they never drift from the program. Skipped,
# with a message, where help2man is missing.
if(TAILOR_SANITIZE)
  # A sanitized tailor is not for installing, and its runtime may fail --help at exit (leaks).
  message(STATUS "TAILOR_SANITIZE=${TAILOR_SANITIZE}: the man pages of tailor are not built")
  return()
endif()
find_program(HELP2MAN help2man)
if(NOT HELP2MAN)
  message(STATUS "help2man not found: the man pages of tailor are not built (apt-get install help2man)")
  return()
endif()
set(_man_dir ${CMAKE_CURRENT_BINARY_DIR}/man)
set(_pages)
foreach(_sub "" record dump stats simulate search replay validate report config pools)
  if(_sub STREQUAL "")
    set(_page tailor)
  else()
    set(_page tailor-${_sub})
  endif()
  add_custom_command(OUTPUT ${_man_dir}/${_page}.1
    COMMAND ${CMAKE_COMMAND} -DHELP2MAN=${HELP2MAN} -DTAILOR=$<TARGET_FILE:tailor> -DSUBCOMMAND=${_sub}
            -DVERSION=${PROJECT_VERSION} -DOUTPUT=${_man_dir}/${_page}.1 -P ${CMAKE_CURRENT_SOURCE_DIR}/man_page.cmake
    DEPENDS tailor ${CMAKE_CURRENT_SOURCE_DIR}/man_page.cmake
    COMMENT "man page ${_page}(1)")
  list(APPEND _pages ${_man_dir}/${_page}.1)
endforeach()
add_custom_target(tailor_man_pages ALL DEPENDS ${_pages})
install(FILES ${_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
