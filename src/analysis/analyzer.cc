// analyze: the stages of src/analysis/, wired. The rules follow torch-tb-profiler as
// docs/tb-semantics.md states them, over the model's meaning of the trace; its own test
// cases are unit tests (tests/analysis/analyzer_test.cc).
#include "analysis/analyzer.h"

#include <algorithm>

#include "analysis/stages.h"
#include "base/executor.h"

namespace torch2pprof {

Analysis Analyze(const Trace& trace, const TraceModel& model, const AnalysisOptions& options, Executor& ex) {
  return Analyze(trace, model, BuildLanes(trace, BuildOptions{}, ex), options, ex);
}

Analysis Analyze(const Trace& trace, const TraceModel& model, const AnalysisOptions& options) {
  Executor one(1);
  return Analyze(trace, model, options, one);
}

Analysis Analyze(const Trace& trace, const TraceModel& model, std::vector<LaneStacks> lanes,
                 const AnalysisOptions& options, Executor& ex) {
  analysis::Events ev(trace, model);
  Analysis a;
  // The overview and the module view read the lanes too: they run beside the critical
  // paths (the longest of the three, whose walks take the threads as they come free).
  auto overview_part = Beside(ex, [&ev, &lanes] { return analysis::Overview(ev, lanes); });
  // The module view is convert's call tree of the Python frames (with_stack): a trace
  // without any has none, and its tree is not built.
  const bool python = std::find(model.category_role.begin(), model.category_role.end(), Role::kPythonFunction) !=
                      model.category_role.end();
  auto modules_part = Beside(
      ex, [&ev, &lanes, &ex, python] { return python ? analysis::Modules(ev, lanes, ex) : analysis::ModulesResult{}; });
  StepWindows windows = FindStepWindows(trace, model);
  analysis::CriticalResult critical = analysis::Critical(ev, lanes, windows, ex, options.timeline_steps, options.paths);
  analysis::ModulesResult modules = modules_part.get();
  analysis::OverviewResult overview = overview_part.get();
  a.trace = std::move(overview.overview);
  a.categories = std::move(overview.categories);
  a.saturated = overview.saturated;
  for (const MemoryTimeline& tl : model.memory) a.saturated += tl.saturated;
  a.modules = std::move(modules.tree);
  a.module_classes = std::move(modules.classes);
  a.python_functions = std::move(modules.python);
  std::vector<LaneStacks>().swap(lanes);
  // What reads only the events comes after the lanes' pieces are freed, so that its
  // memory never adds to theirs (it sets analyze's peak). With threads, each view runs
  // as soon as what it reads is there, beside the others: the steps beside the operator
  // tables; the kernels by operator once those are done; the views of the events alone
  // (kEventViews: annotations, the stream views, launch statistics) once the steps' rows
  // are taken (their scope, which steps count, is known from the windows before any view
  // runs). Every view is a function of the events (and of the results it names), so no
  // output depends on the threads.
  const analysis::StepScope analysed = analysis::ScopeOf(windows);
  const analysis::StepScope* per_step = options.per_step ? &analysed : nullptr;
  auto steps = Beside(ex, [&ev, &ex, &windows] { return analysis::Steps(ev, std::move(windows), ex); });
  analysis::OperatorsResult operators = analysis::Operators(ev, options.group_by_shape, per_step, ex);
  a.operators = std::move(operators.rows);
  auto kernel_ops = Beside(ex, [&ev, &operators] { return analysis::KernelsByOperator(ev, operators.launchers); });
  a.kernels = analysis::Kernels(ev, &a.kernel_total_ns, per_step, &a.saturated);
  a.saturated += operators.saturated;
  a.memory = analysis::Memory(ev, operators.owners);
  analysis::StepsResult s = steps.get();
  a.steps = std::move(s.rows);
  a.whole_trace_step = s.whole_trace;
  // Each view writes its own field of `a` (kEventViews): no two touch the same one.
  std::vector<Pending<bool>> views;
  for (const analysis::EventView& v : analysis::kEventViews) {
    views.push_back(Beside(ex, [&a, &ev, &analysed, &v] {
      v.run(a, ev, analysed);
      return true;
    }));
  }
  const analysis::StepScope& scope = analysed;
  a.gpu = analysis::Gpus(ev, a.trace.devices, s.window);  // utilization is over the steps' window
  a.synchronizations = analysis::Synchronizations(ev, operators.launchers, scope);
  analysis::KernelOpsResult kernel_ops_result = kernel_ops.get();
  a.kernels_by_operator = std::move(kernel_ops_result.rows);
  a.tensor_cores = std::move(kernel_ops_result.tensor_cores);
  for (Pending<bool>& v : views) v.get();
  a.critical_path = std::move(critical.steps);
  a.critical_names = std::move(critical.names);
  a.critical_top = critical.top;
  a.timelines = std::move(critical.timelines);
  a.context = analysis::ContextOf(a, ev);
  a.recommendations = analysis::Recommend(a, critical);
  a.what_if = analysis::TotalOf(critical, a.critical_path.size());
  return a;
}

}  // namespace torch2pprof

namespace torch2pprof {

Bound CriticalStep::bound_by() const {
  int best = 0;
  for (int b = 1; b < kBounds; ++b) {
    if (bound_ns[b] > bound_ns[best]) best = b;
  }
  return static_cast<Bound>(best);
}

const char* CriticalStep::bound_words() const {
  const Bound b = bound_by();
  if (b == Bound::kGpuCompute && copy_ns * 2 > bound_ns[static_cast<int>(b)]) return "device copies";
  return kBoundWords[static_cast<int>(b)];
}

void StepSeries::Add(uint32_t step, int64_t ns) {
  if (!v_.empty() && v_.back().first == step) {
    v_.back().second += ns;
  } else {
    v_.emplace_back(step, ns);
  }
}

void StepSeries::Merge(const StepSeries& other) { v_.insert(v_.end(), other.v_.begin(), other.v_.end()); }

void StepSeries::Finish() {
  // Lanes' series merged may repeat a step and come out of order: sort, add repeats up.
  std::stable_sort(v_.begin(), v_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t out = 0;
  for (size_t i = 0; i < v_.size(); ++i) {
    if (out > 0 && v_[out - 1].first == v_[i].first) {
      v_[out - 1].second += v_[i].second;
    } else {
      v_[out++] = v_[i];
    }
  }
  v_.resize(out);
  v_.erase(std::remove_if(v_.begin(), v_.end(), [](const auto& e) { return e.second == 0; }), v_.end());
}

int64_t StepSeries::At(uint32_t step) const {
  auto it = std::lower_bound(v_.begin(), v_.end(), step, [](const auto& e, uint32_t s) { return e.first < s; });
  return it != v_.end() && it->first == step ? it->second : 0;
}

void StepSeries::AddTo(std::vector<int64_t>* by_step) const {
  for (const auto& [step, ns] : v_) {
    if (step < by_step->size()) (*by_step)[step] += ns;
  }
}

}  // namespace torch2pprof
