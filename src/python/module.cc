// The Python front end: torch2pprof._core.run(args) runs one command in this process as
// the CLI would, the GIL released; the package python/torch2pprof builds args from keywords.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/cli.h"
#include "torch2pprof/version.h"

namespace nb = nanobind;

namespace {

// The CLI's exit status, its standard output (bytes: a report, or a profile written to
// "-") and its standard error (one line per warning, and the error's line): the same bytes
// the command line would print, so the package's results equal the CLI's.
std::tuple<int, nb::bytes, std::string> Run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int status;
  {
    nb::gil_scoped_release release;
    std::vector<const char*> argv{"torch2pprof"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    status =
        torch2pprof::cli::Run(static_cast<int>(argv.size()), argv.data(), out, err, torch2pprof::cli::Host::kEmbedded);
  }
  const std::string text = out.str();
  return {status, nb::bytes(text.data(), text.size()), err.str()};
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "torch2pprof's commands, run in this process (use the package, not this module)";
  m.attr("version") = torch2pprof::kVersion;
  m.def("run", &Run, nb::arg("args"),
        "Runs a torch2pprof command (the CLI's arguments, without the program name); returns "
        "(exit status, standard output as bytes, standard error as text).");
}
