// analyze's tables, each described once (report/table.h) and written as text, JSON,
// CSV and markdown; compare and the HTML report build on the same descriptions.
#pragma once

#include "report/table.h"
#include "torch2pprof/analysis.h"

namespace torch2pprof::report {

DataTable<CategoryRow> CategoriesTable(const Analysis& a);
DataTable<StepRow> StepsTable(const Analysis& a);
DataTable<OperatorRow> OperatorsTable(const Analysis& a);
DataTable<KernelRow> KernelsTable(const Analysis& a);
DataTable<GpuRow> GpusTable(const Analysis& a);
DataTable<MemoryRow> MemoryTable(const Analysis& a, int top);
DataTable<ModuleNode> ModulesTable(const Analysis& a);
DataTable<ModuleClassRow> ModuleClassesTable(const Analysis& a);
DataTable<PythonFunctionRow> PythonFunctionsTable(const Analysis& a);
DataTable<Recommendation> RecommendationsTable(const Analysis& a);

}  // namespace torch2pprof::report
