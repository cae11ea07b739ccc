// Micro-benchmarks of each stage on one synthetic Kineto-like trace (~40 MB of
// JSON: 3 CPU threads with nested operators, 2 GPU streams of kernels).
// Run: build/micro_bench [--benchmark_filter=Load]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "analysis/analyzer.h"
#include "convert/aggregator.h"
#include "model/lane_builder.h"
#include "torch2pprof/output.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {

// Written once per process; removed at exit.
const std::string& TracePath() {
  static const std::string path = [] {
    std::string p = "/tmp/t2p_micro_bench_" + std::to_string(::getpid()) + ".json";
    FILE* f = std::fopen(p.c_str(), "w");
    std::fputs("{\"traceEvents\": [\n", f);
    long ts = 1712195495000000;
    for (int step = 0; step < 20000; ++step) {
      for (int tid = 1; tid <= 3; ++tid) {
        std::fprintf(f,
                     "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 100, \"tid\": %d, "
                     "\"ts\": %ld.250, \"dur\": 40.5, \"args\": {\"External id\": %d, \"Input Dims\": [[64, 128]]}},\n"
                     "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 100, \"tid\": %d, "
                     "\"ts\": %ld.500, \"dur\": 30.125, \"args\": {\"External id\": %d}},\n"
                     "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, "
                     "\"tid\": %d, \"ts\": %ld.750, \"dur\": 5, \"args\": {\"correlation\": %d}},\n",
                     tid, ts, step, tid, ts + 2, step, tid, ts + 10, step);
      }
      for (int stream = 7; stream <= 8; ++stream) {
        std::fprintf(f,
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void gemm_kernel<float, 128>(float const*)\", "
                     "\"pid\": 0, \"tid\": %d, \"ts\": %ld.125, \"dur\": 25.5, \"args\": {\"correlation\": %d}},\n",
                     stream, ts + 20, step);
      }
      ts += 50;
    }
    std::fputs(
        "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 7, \"args\": {\"name\": \"stream 7\"}}\n]}\n",
        f);
    std::fclose(f);
    std::atexit([] { std::remove(TracePath().c_str()); });
    return p;
  }();
  return path;
}

const Trace& LoadedTrace() {
  static const Trace trace = LoadTrace(LoadOptions{TracePath(), 1});
  return trace;
}

void BM_LoadTrace(benchmark::State& state) {
  int64_t bytes = 0;
  for (auto _ : state) {
    Trace t = LoadTrace(LoadOptions{TracePath(), static_cast<int>(state.range(0))});
    bytes += static_cast<int64_t>(t.stats.json_bytes);
    benchmark::DoNotOptimize(t.intervals.data());
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_LoadTrace)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_BuildLanes(benchmark::State& state) {
  const Trace& trace = LoadedTrace();
  Executor ex(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto lanes = BuildLanes(trace, BuildOptions{}, ex);
    benchmark::DoNotOptimize(lanes.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * trace.intervals.size()));
}
BENCHMARK(BM_BuildLanes)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Aggregate(benchmark::State& state) {
  const Trace& trace = LoadedTrace();
  TraceModel model = BuildModel(trace);
  auto lanes = BuildLanes(trace, ConvertBuildOptions(model));
  Executor one(1);
  for (auto _ : state) {
    Profile p = Aggregate(trace, model, lanes, AggregateOptions{}, one);
    benchmark::DoNotOptimize(p.samples.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * trace.intervals.size()));
}
BENCHMARK(BM_Aggregate)->Unit(benchmark::kMillisecond);

void BM_EncodeAndGzip(benchmark::State& state) {
  const Trace& trace = LoadedTrace();
  Profile p = Aggregate(trace);
  for (auto _ : state) {
    std::string out = Gzip(EncodeProfile(p));
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_EncodeAndGzip)->Unit(benchmark::kMillisecond);

// analyze's stage after loading: lane walk, steps, operator tree, kernels, GPU, memory.
void BM_Analyze(benchmark::State& state) {
  static const Trace trace = LoadTrace(LoadOptions{TracePath(), 1, /*details=*/true});
  static const TraceModel model = BuildModel(trace);
  Executor ex(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Analysis a = Analyze(trace, model, AnalysisOptions{}, ex);
    benchmark::DoNotOptimize(a.operators.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * trace.intervals.size()));
}
BENCHMARK(BM_Analyze)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace torch2pprof

BENCHMARK_MAIN();
