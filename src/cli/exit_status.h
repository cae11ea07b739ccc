// The command's exit statuses (README: Errors and exit status; docs/reference.md). They belong to the
// command line: the library reports errors as torch2pprof::Error and returns results.
#pragma once

#include "torch2pprof/error.h"

namespace torch2pprof::cli {

enum ExitStatus : int {
  kExitOk = 0,          // success
  kExitBadInput = 1,    // the input is missing, unreadable or not a trace
  kExitUsage = 2,       // the command line is wrong
  kExitOutput = 3,      // the output could not be written
  kExitRegression = 4,  // compare: a --fail-on rule fired
  kExitInternal = 5,    // a bug in torch2pprof, not a fault of the input (please report it)
};

inline int ExitStatusOf(const Error& e) {
  switch (e.kind()) {
    case Error::Kind::kUsage:
      return kExitUsage;
    case Error::Kind::kOutput:
      return kExitOutput;
    case Error::Kind::kInput:
      break;
  }
  return kExitBadInput;
}

}  // namespace torch2pprof::cli
