# Run after a test program is linked (cmake -P): one ctest entry per doctest
# case of it, named "PROGRAM: case name", so that ctest schedules a long
# program's cases side by side and reports each one. Writes OUT: the add_test
# lines and the list NAME_CASES of the entries, which the program's stub in
# TEST_INCLUDE_FILES gives its properties (CMakeLists.txt).
#   EXE  the executable the program is in (its folder's)   NAME  the program
#   FILE_FILTER  doctest's filter for the program's file (--source-file=*/NAME.cpp)
#   OUT  the file to write
execute_process(COMMAND ${EXE} ${FILE_FILTER} --list-test-cases --no-colors=true
  OUTPUT_VARIABLE listing RESULT_VARIABLE listed)
if(NOT listed EQUAL 0)
  message(FATAL_ERROR "${NAME} --list-test-cases failed (${listed}): ${listing}")
endif()
set(script "")
set(cases "")
# One case per line between doctest's own lines; split by hand, as a ";" in a
# name would cut a CMake list.
string(REGEX REPLACE "\r?\n" "\n" listing "${listing}\n")
while(listing MATCHES "^([^\n]*)\n(.*)$")
  set(line "${CMAKE_MATCH_1}")
  set(listing "${CMAKE_MATCH_2}")
  if(line STREQUAL "" OR line MATCHES "^\\[doctest\\]" OR line MATCHES "^=+$")
    continue()
  endif()
  if(line MATCHES "[*?]")
    message(FATAL_ERROR "${NAME}: a case named with * or ? cannot be an entry of its own: ${line}")
  endif()
  # doctest's --test-case: "," separates filters, "\" escapes, "?" is any
  # character (here: a ";", which would cut CMake's lists; the entry's name
  # has a "," there).
  string(REPLACE "\\" "\\\\" filter "${line}")
  string(REPLACE "," "\\," filter "${filter}")
  string(REPLACE ";" "?" filter "${filter}")
  string(REPLACE ";" "," entry "${NAME}: ${line}")
  string(APPEND script
    "add_test([==[${entry}]==] [==[${EXE}]==] [==[${FILE_FILTER}]==] "
    "[==[--test-case=${filter}]==])\n")
  string(APPEND cases " [==[${entry}]==]")
endwhile()
if(cases STREQUAL "")
  message(FATAL_ERROR "${NAME} lists no test cases")
endif()
file(WRITE "${OUT}" "${script}set(${NAME}_CASES${cases})\n")
