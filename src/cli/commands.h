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

struct AnalyzeArgs {
  std::string input;
  int top = 20;                   // rows per table; 0: all
  std::string format = "text";    // text, json or csv
  std::string table;              // csv: which table
  std::string group_by = "name";  // operators by name, or by name and input shape
  int threads = 0;
};

// Throw torch2pprof::Error; return the exit status.
int RunConvert(const ConvertArgs& args, std::ostream& out, std::ostream& err);
int RunAnalyze(const AnalyzeArgs& args, std::ostream& out, std::ostream& err);

}  // namespace torch2pprof::cli
