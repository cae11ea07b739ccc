// consumer TRACE OUT.pb.gz: converts TRACE with the library's one call, then analyzes it,
// compares it with itself and reads it through the stage headers, printing what a caller
// would read from the results.
#include <torch2pprof/report.h>
#include <torch2pprof/stages/trace_loader.h>
#include <torch2pprof/stages/trace_model.h>
#include <torch2pprof/torch2pprof.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  try {
    torch2pprof::ConvertOptions convert;
    convert.inputs = {argv[1]};
    convert.output = argv[2];
    torch2pprof::ConvertResult profile = torch2pprof::Convert(convert);
    std::cout << "samples " << profile.profile.samples.size() << "\n";

    torch2pprof::AnalyzeOptions analyze;
    analyze.input = argv[1];
    analyze.per_step = true;
    torch2pprof::AnalyzeResult report = torch2pprof::Analyze(analyze);
    for (const torch2pprof::StepRow& step : report.analysis.steps) {
      std::cout << step.name << " " << step.total_ns << "\n";
    }

    torch2pprof::CompareOptions gate;
    gate.rules = {torch2pprof::ParseRule("step_time>+5%")};
    torch2pprof::Comparison same = torch2pprof::Compare(report.analysis, report.analysis, gate);
    std::cout << "regressed " << same.regressed << " " << torch2pprof::DescribeRule(same.rules[0]) << "\n";

    torch2pprof::LoadOptions load;
    load.path = argv[1];
    torch2pprof::Trace trace = torch2pprof::LoadTrace(load);
    torch2pprof::TraceModel model = torch2pprof::BuildModel(trace);
    std::cout << "intervals " << trace.intervals.size() << " steps " << model.steps.size() << "\n";
  } catch (const torch2pprof::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
