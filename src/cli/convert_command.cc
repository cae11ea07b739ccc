#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <thread>

#include "commands.h"
#include "torch2pprof/aggregator.h"
#include "torch2pprof/error.h"
#include "torch2pprof/lane_builder.h"
#include "torch2pprof/pprof_writer.h"
#include "torch2pprof/trace_loader.h"

namespace torch2pprof::cli {

void PrintWarnings(const Trace& trace, std::ostream& err) {
  for (const std::string& w : LoadWarnings(trace)) err << "torch2pprof: " << w << "\n";
}

namespace {

// distributedInfo.rank, or -1.
int64_t RankOf(const Trace& trace) {
  auto it = trace.header.raw.find("distributedInfo");
  if (it == trace.header.raw.end()) return -1;
  nlohmann::json info = nlohmann::json::parse(it->second, nullptr, false);
  if (!info.is_object() || !info.contains("rank") || !info["rank"].is_number_integer()) return -1;
  return info["rank"].get<int64_t>();
}

// Loads every input, `workers` at a time; the first input (in command-line order)
// that fails fails the command.
std::vector<Trace> LoadAll(const std::vector<std::string>& inputs, int workers, const InputArgs& in) {
  std::vector<Trace> traces(inputs.size());
  std::vector<std::exception_ptr> errors(inputs.size());
  std::atomic<size_t> next{0};
  int per_load = inputs.size() == 1 ? workers : 1;
  auto work = [&] {
    for (size_t i; (i = next++) < inputs.size();) {
      try {
        traces[i] = LoadTrace(LoadOptions{inputs[i], per_load, false, in.strict, in.allow_truncated});
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(workers, static_cast<int>(inputs.size())); ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return traces;
}

}  // namespace

int RunConvert(const ConvertArgs& args, std::ostream& /*out*/, std::ostream& err) {
  bool merged = !args.output.empty();
  if (!merged && args.files.size() != 2) {
    throw Error(Error::Kind::kUsage, "", -1,
                "convert takes IN OUT, or -o OUT IN...: torch2pprof convert trace.json.gz out.pb.gz");
  }
  if (merged && args.files.empty()) throw Error(Error::Kind::kUsage, "", -1, "convert -o OUT needs at least one input");
  std::vector<std::string> inputs = merged ? args.files : std::vector<std::string>{args.files[0]};
  std::string output = merged ? args.output : args.files[1];
  if (output == "-" && ::isatty(1)) {
    throw Error(Error::Kind::kUsage, "", -1,
                "refusing to write a binary profile to a terminal; redirect standard output or name an output file");
  }
  int threads = args.threads > 0 ? args.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Trace> traces = LoadAll(inputs, threads, args.in);
  std::vector<std::vector<LaneStacks>> lanes(traces.size());
  std::vector<AggregateInput> parts;
  for (size_t i = 0; i < traces.size(); ++i) {
    const Trace& trace = traces[i];
    if (trace.intervals.empty()) {
      ThrowInput(trace.file, -1,
                 "the trace has no timed events (X events with dur > 0 or B/E pairs) among its " +
                     std::to_string(trace.stats.events) + " events");
    }
    PrintWarnings(trace, err);
    lanes[i] = BuildLanes(trace, BuildOptions{threads});
    parts.push_back(AggregateInput{&trace, &lanes[i], merged ? RankOf(trace) : -1});
  }
  if (merged) {
    // Ranks label samples apart; the input's position stands in for a missing or repeated rank.
    std::set<int64_t> seen;
    bool usable = true;
    for (const AggregateInput& p : parts) usable &= p.rank >= 0 && seen.insert(p.rank).second;
    if (!usable) {
      if (parts.size() > 1 && !seen.empty()) {
        err << "torch2pprof: warning: distributedInfo.rank is missing or repeated; ranks are the inputs' positions\n";
      }
      for (size_t i = 0; i < parts.size(); ++i) parts[i].rank = static_cast<int64_t>(i);
    }
  }
  Profile profile = Aggregate(parts);
  WriteOutputFile(output, Gzip(EncodeProfile(profile)), inputs);
  return kExitOk;
}

}  // namespace torch2pprof::cli
