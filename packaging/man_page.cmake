# One man page from `tailor [SUBCOMMAND] --help` (packaging/man.cmake):
#   cmake -DHELP2MAN=... -DTAILOR=... -DSUBCOMMAND=record|"" -DVERSION=... -DOUTPUT=... -P man_page.cmake
# help2man titles a page after the program it runs; a subcommand's page is
# retitled TAILOR-SUBCOMMAND and named after it in its NAME section.
get_filename_component(_dir "${OUTPUT}" DIRECTORY)
file(MAKE_DIRECTORY "${_dir}")
# The NAME line: the first line of the help, the command's own description.
if(SUBCOMMAND)
  set(_help "${SUBCOMMAND} --help")
  execute_process(COMMAND "${TAILOR}" ${SUBCOMMAND} --help OUTPUT_VARIABLE _text RESULT_VARIABLE _status)
else()
  set(_help "--help")
  execute_process(COMMAND "${TAILOR}" --help OUTPUT_VARIABLE _text RESULT_VARIABLE _status)
endif()
if(NOT _status EQUAL 0)
  message(FATAL_ERROR "'${TAILOR} ${_help}' failed (status ${_status})")
endif()
string(REGEX MATCH "^[^\n]*" _name "${_text}")
string(REGEX REPLACE "^tailor: " "" _name "${_name}")
execute_process(
  COMMAND "${HELP2MAN}" --no-info --no-discard-stderr "--help-option=${_help}" "--version-string=${VERSION}"
          "--name=${_name}" --section=1 --output=${OUTPUT}.tmp "${TAILOR}"
  RESULT_VARIABLE _status ERROR_VARIABLE _error)
if(NOT _status EQUAL 0)
  message(FATAL_ERROR "help2man failed on '${TAILOR} ${_help}': ${_error}")
endif()
file(READ "${OUTPUT}.tmp" _page)
if(SUBCOMMAND)
  string(TOUPPER "${SUBCOMMAND}" _upper)
  string(REGEX REPLACE "\n\\.TH TAILOR " "\n.TH TAILOR-${_upper} " _page "${_page}")
  string(REGEX REPLACE "\ntailor \\\\- " "\ntailor-${SUBCOMMAND} \\\\- " _page "${_page}")
endif()
file(WRITE "${OUTPUT}" "${_page}")
file(REMOVE "${OUTPUT}.tmp")
