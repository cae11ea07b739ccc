// analyze: the stages of src/analysis/, wired. The rules follow torch-tb-profiler as
// docs/tb-semantics.md states them, over the model's meaning of the trace; its own test
// cases are unit tests (tests/analyzer_test.cc).
#include "torch2pprof/analyzer.h"

#include <future>

#include "analysis/stages.h"
#include "parallel_for.h"

namespace torch2pprof {

Analysis Analyze(const Trace& trace, const TraceModel& model, const AnalysisOptions& options) {
  BuildOptions build;
  build.threads = options.threads;
  return Analyze(trace, model, BuildLanes(trace, build), options);
}

Analysis Analyze(const Trace& trace, const TraceModel& model, std::vector<LaneStacks> lanes,
                 const AnalysisOptions& options) {
  analysis::Events ev(trace, model);
  Analysis a;
  analysis::OverviewResult overview = analysis::Overview(ev, lanes);
  a.trace = std::move(overview.overview);
  a.categories = std::move(overview.categories);
  analysis::ModulesResult modules = analysis::Modules(ev, lanes, options.threads);
  a.modules = std::move(modules.tree);
  a.module_classes = std::move(modules.classes);
  a.python_functions = std::move(modules.python);
  std::vector<LaneStacks>().swap(lanes);
  // What reads only the events comes after the lanes' pieces are freed, so that its
  // memory never adds to theirs (gpt2_big: the peak 64.8 -> 62.3 MB at one thread, 68.5-70.8
  // -> 66.5-67 MB at two); with threads, the steps beside the operator tables.
  auto steps = Beside(options.threads, [&ev] { return analysis::Steps(ev); });
  analysis::OperatorsResult operators =
      analysis::Operators(ev, options.group_by_shape, options.per_step, options.threads);
  a.operators = std::move(operators.rows);
  a.kernels = analysis::Kernels(ev, &a.kernel_total_ns, options.per_step);
  a.memory = analysis::Memory(ev, operators.owners);
  analysis::StepsResult s = steps.get();
  a.steps = std::move(s.rows);
  if (options.per_step) {
    // Per-step values are by the model's steps; the analysed steps are the first of them.
    size_t n = a.steps.size();
    for (OperatorRow& r : a.operators) r.step_host_total_ns.resize(n), r.step_device_total_ns.resize(n);
    for (KernelRow& r : a.kernels) r.step_total_ns.resize(n);
  }
  a.whole_trace_step = s.whole_trace;
  a.gpu = analysis::Gpus(ev, a.trace.devices, s.window);  // utilization is over the steps' window
  a.recommendations = analysis::Recommend(a);
  return a;
}

}  // namespace torch2pprof
