// analyze's tables, each described once (report/table.h) and written as text, JSON,
// CSV and markdown; compare and the HTML report build on the same descriptions.
#pragma once

#include "report/table.h"
#include "torch2pprof/analysis.h"

namespace torch2pprof::report {

// The views drawn alike in the text and HTML reports (analysis_report.cc's kViews entries
// with a title), in the views' order: a section each, with its note and its table.
struct DrawnView {
  const char* name;  // the JSON key; the section's id
  const char* title;
  const char* note;
  size_t (*count)(const Analysis& a);  // 0: no section
  std::string (*html)(const Analysis& a, const std::string& id, int top);
};
std::vector<DrawnView> DrawnViews();

DataTable<CategoryRow> CategoriesTable(const Analysis& a);
DataTable<StepRow> StepsTable(const Analysis& a);
DataTable<OperatorRow> OperatorsTable(const Analysis& a);
DataTable<KernelRow> KernelsTable(const Analysis& a);
DataTable<GpuRow> GpusTable(const Analysis& a);
DataTable<IdleRow> IdleTimeTable(const Analysis& a);
DataTable<QueueRow> QueueLengthTable(const Analysis& a);
DataTable<CopyRow> CopiesTable(const Analysis& a);
DataTable<KernelOpRow> KernelsByOperatorTable(const Analysis& a);
DataTable<TensorCoreOp> TensorCoreOpsTable(const Analysis& a);
DataTable<SyncRow> SynchronizationsTable(const Analysis& a);
DataTable<AnnotationRow> AnnotationsTable(const Analysis& a);
DataTable<CollectiveSizeRow> CollectiveSizesTable(const Analysis& a);
// "tensor_cores": the share, its sums and the operators (TensorCoreOpsTable).
void WriteTensorCoresJson(Json& j, const Analysis& a, int top);
// The launch statistics as rows, one per measure (delay, call, device time), for the
// table below; JSON writes them as one object (WriteLaunchesJson).
struct LaunchRow {
  const char* key;      // "launch_delay": JSON's "launch_delay_us"
  const char* measure;  // text
  const Percentiles* p;
  uint64_t count, outliers;
  const char* outlier_rule;
};
std::vector<LaunchRow> LaunchRows(const LaunchStats& s);
DataTable<LaunchRow> LaunchesTable(const std::vector<LaunchRow>& rows);
void WriteLaunchesJson(Json& j, const LaunchStats& s);
DataTable<MemoryRow> MemoryTable(const Analysis& a, int top);
DataTable<ModuleNode> ModulesTable(const Analysis& a);
DataTable<ModuleClassRow> ModuleClassesTable(const Analysis& a);
DataTable<PythonFunctionRow> PythonFunctionsTable(const Analysis& a);
DataTable<Recommendation> RecommendationsTable(const Analysis& a);
// Each step's critical path (its categories, the event holding most), and the events
// holding most of it over all steps.
DataTable<CriticalStep> CriticalPathTable(const Analysis& a);
DataTable<CriticalItem> CriticalTopTable(const Analysis& a);

}  // namespace torch2pprof::report
