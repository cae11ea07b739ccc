// The options the commands share, and the words their help and usage errors use: each
// command registers its own subcommand (Add* in commands.h) with these.
#pragma once

#include <cstddef>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "torch2pprof/error.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace torch2pprof::cli {

// --strict, --allow-truncated, --progress, --quiet: how an input is read and reported.
void AddInputOptions(CLI::App* cmd, InputArgs* in);
// --max-snapshot-items: the commands that read memory snapshots.
void AddSnapshotOptions(CLI::App* cmd, InputArgs* in);
// A whole number in [min, max]; anything else gets a plain message, not CLI11's.
CLI::Validator WholeNumber(long long min, long long max);
// What a command reads, from the router's one list (InputsOfCommands), for its help.
std::string Reads(const std::string& command);
// "a, b, c": a list the report decided (its CSV tables), as help prints it.
std::string Joined(const std::vector<std::string>& names);
// The usage error of a command given the wrong number of inputs:
// "compare takes two inputs: BASE NEW (two traces or two memory snapshots); got 1".
[[noreturn]] void WrongInputs(const std::string& command, const std::string& expects, size_t got);

// Writes a report of `file`: out of memory there is named as the library names it in its
// stages (the file, the stage), never a bare "out of memory".
template <typename Write>
void WriteReport(const std::string& file, Write write) {
  try {
    write();
  } catch (const std::bad_alloc&) {
    throw Error(Error::Kind::kInput, file, -1,
                "out of memory while writing the report: the input needs more memory than this process may have "
                "(ulimit -v, the cgroup, the machine)");
  }
}

}  // namespace torch2pprof::cli
