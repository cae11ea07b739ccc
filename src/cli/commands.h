// One function per subcommand, each taking parsed options; shared by cli.cc only.
#pragma once

#include <iosfwd>
#include <string>

namespace torch2pprof::cli {

struct ConvertArgs {
  std::string input;
  std::string output;
  int threads = 0;  // 0: all cores
};

// Throws torch2pprof::Error; returns the exit status.
int RunConvert(const ConvertArgs& args, std::ostream& out, std::ostream& err);

}  // namespace torch2pprof::cli
