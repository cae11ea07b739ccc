#include "cli/options.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "torch2pprof/error.h"
#include "torch2pprof/input.h"

namespace torch2pprof::cli {

void AddInputOptions(CLI::App* cmd, InputArgs* in) {
  cmd->add_flag("--strict", in->strict, "An event that cannot be read is an error (default: skip it, count it, warn)");
  cmd->add_flag("--allow-truncated", in->allow_truncated,
                "A trace cut off mid-write keeps the events complete before the cut (default: an error)");
  cmd->add_flag("--progress", in->progress,
                "Show progress on stderr even when it is not a terminal (default: on a terminal, after 0.5 s)");
  cmd->add_flag("--quiet", in->quiet, "No warnings and no progress on stderr (errors still print)");
}

// What a command reads, from the router's one list (InputsOfCommands): the kinds it takes,
// each with its files, and how it takes them.
std::string Reads(const std::string& command) {
  std::string kinds;
  for (InputKind k : InputsOf(command).kinds) {
    kinds += (kinds.empty() ? "" : ", ") + std::string(WordsOf(k).name) + " (" + WordsOf(k).files + ")";
  }
  return "Reads " + kinds + ": " + InputsOf(command).how + ". Each input's kind is told by its first bytes.";
}

// "a, b, c": a list the report decided (its CSV tables), as help prints it.
std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The usage line of a command given the wrong number of inputs.
[[noreturn]] void WrongInputs(const std::string& command, const std::string& expects, size_t got) {
  throw Error(Error::Kind::kUsage, "", -1,
              command + " takes " + expects + " (" + InputsOf(command).how + "); got " +
                  (got == 0 ? std::string("none") : std::to_string(got)) + " (see 'torch2pprof " + command +
                  " --help')");
}

// The commands that read memory snapshots.
void AddSnapshotOptions(CLI::App* cmd, InputArgs* in) {
  cmd->add_option("--max-snapshot-items", in->max_snapshot_items,
                  "Memory snapshots: the segments, blocks and ring entries a snapshot may hold once its shared "
                  "references are expanded (default: 4194304 and a quarter of the pickle's bytes)")
      ->check(WholeNumber(1, (1LL << 62)));
}

// A whole number in [min, max]; anything else gets a plain message, not CLI11's.
CLI::Validator WholeNumber(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || errno == ERANGE || v < min || v > max) {
          return "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" + s +
                 "'";
        }
        return "";
      },
      "N");
}

}  // namespace torch2pprof::cli
