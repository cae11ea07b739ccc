// consumer TRACE OUT.pb.gz: converts TRACE with the library's one call, then analyzes it
// and prints what a caller would read from the results.
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
    torch2pprof::AnalyzeResult report = torch2pprof::Analyze(analyze);
    for (const torch2pprof::StepRow& step : report.analysis.steps) {
      std::cout << step.name << " " << step.total_ns << "\n";
    }
  } catch (const torch2pprof::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
