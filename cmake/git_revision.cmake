# Writes OUT, the header that names the source tree's git revision for --version. It
# runs at every build, not at configure time (a revision taken then goes stale with
# every commit), and rewrites OUT only when the revision changed, so that version.cc
# recompiles only then. Outside a git checkout (a source tarball) OUT is empty.
set(text "")
if(GIT AND EXISTS "${SRC}/.git")
  execute_process(COMMAND "${GIT}" describe --always --dirty --abbrev=12 WORKING_DIRECTORY "${SRC}"
                  OUTPUT_VARIABLE rev RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0 AND rev)
    set(text "#define TORCH2PPROF_GIT_REVISION \"${rev}\"\n")
  endif()
endif()
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
