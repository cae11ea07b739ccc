// Frames from names, and samples per stack and lane; values by hand.
#include "convert/aggregator.h"

#include <gtest/gtest.h>

#include <map>
#include "analysis/analyzer.h"
#include "convert/profile_builder.h"
#include "test_util.h"
#include "torch2pprof/output.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {

using testing::ConvertText;

TEST(Aggregator, WallIsSelfTimeAndCallsCountEachIntervalOnce) {
  auto d = ConvertText(R"([
    {"ph": "X", "name": "parent", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
    {"ph": "X", "name": "child", "pid": 1, "tid": 1, "ts": 2, "dur": 3},
    {"ph": "X", "name": "parent", "pid": 1, "tid": 1, "ts": 20, "dur": 4},
    {"ph": "X", "name": "straddler", "pid": 1, "tid": 1, "ts": 22, "dur": 6},
    {"ph": "X", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}])");
  EXPECT_EQ(d.problem, "");
  EXPECT_EQ(d.sample_types, (std::vector<std::string>{"calls/count", "wall/nanoseconds", "work/nanoseconds"}));
  EXPECT_EQ(d.default_sample_type, "work");  // no waits here: work is wall
  std::map<std::string, std::vector<int64_t>> want = {
      {"pid=1,tid=1|parent", {2, 7000 + 2000, 9000}},     {"pid=1,tid=1|parent;child", {1, 3000, 3000}},
      {"pid=1,tid=1|parent;straddler", {1, 2000, 2000}},  // [22,24) inside parent
      {"pid=1,tid=1|straddler", {0, 4000, 4000}},         // its rest [24,28): time, no second call
      {"pid=0,thread=stream 7,tid=7|k", {1, 2000, 2000}},
  };
  EXPECT_EQ(d.stacks, want);
  EXPECT_EQ(d.duration_nanos, 28000);
  EXPECT_EQ(d.time_nanos, 0);  // relative timestamps and no baseTimeNanoseconds: unknown
  // One Mapping that names the trace for pprof's title, with no address to symbolize.
  EXPECT_EQ(d.mappings, 1u);
  EXPECT_EQ(d.mapping_file, "trace.json");
  EXPECT_TRUE(d.locations_mapped);
  EXPECT_EQ(d.functions, 4u);
  EXPECT_EQ(d.locations, 4u);
}

TEST(Aggregator, RepeatedStacksAggregateAndAddressesMerge) {
  auto d = ConvertText(R"([
    {"ph": "X", "name": "<built-in method add_ of Tensor object at 0x7f00>", "pid": 1, "tid": 1, "ts": 0, "dur": 1},
    {"ph": "X", "name": "<built-in method add_ of Tensor object at 0x7f08>", "pid": 1, "tid": 1, "ts": 5, "dur": 2}])");
  ASSERT_EQ(d.stacks.size(), 1u);
  EXPECT_EQ(d.stacks.begin()->second, (std::vector<int64_t>{2, 3000, 3000}));
  EXPECT_EQ(d.functions, 1u);
}

TEST(Aggregator, WallClockStartFromBaseTimeOrEpochTimestamps) {
  auto with_base = ConvertText(R"({"baseTimeNanoseconds": 1700000000000000000,
    "traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1000.5, "dur": 1}]})");
  EXPECT_EQ(with_base.time_nanos, 1700000000001000500);
  auto epoch = ConvertText(R"([{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1712195495519695.8, "dur": 1}])");
  EXPECT_EQ(epoch.time_nanos, 1712195495519695800);
}

TEST(Aggregator, CommentsSayWhatWasReadAndSkipped) {
  auto d = ConvertText(R"([
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 0},
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
    {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 5}])");
  ASSERT_EQ(d.comments.size(), 3u);
  EXPECT_NE(d.comments[0].find("convert"), std::string::npos);
  EXPECT_NE(d.comments[1].find("events: 3 (X 3)"), std::string::npos) << d.comments[1];
  EXPECT_NE(d.comments[1].find("intervals that outlive their caller: 1"), std::string::npos) << d.comments[1];
  EXPECT_EQ(d.comments[2], "skipped: 1, zero_duration 1");
}

TEST(Aggregator, PythonStacksFromAKinetoStyleTrace) {
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "python_function", "name": "train.py(42): <module>", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "python_function", "name": "model.py(30): forward", "pid": 1, "tid": 1, "ts": 10, "dur": 20},
    {"ph": "X", "cat": "python_function", "name": "model.py(55): forward", "pid": 1, "tid": 1, "ts": 40, "dur": 20},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 45, "dur": 5}])");
  EXPECT_EQ(d.stacks.at("pid=1,tid=1|train.py(42): <module>;model.py(55): forward;aten::mm"),
            (std::vector<int64_t>{1, 5000, 5000}));
  EXPECT_EQ(d.display_names.at("model.py(30): forward"), "forward model.py:30");
  EXPECT_EQ(d.display_names.at("model.py(55): forward"), "forward model.py:55");
  EXPECT_EQ(d.files.at("model.py(55): forward"), std::make_pair(std::string("model.py"), int64_t{55}));
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

using testing::ConvertText;

// GPU attribution: values by hand from the events in each test.
TEST(AggregatorGpu, KernelsHangUnderTheStackThatLaunchedThem) {
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"correlation": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 30, "dur": 0, "args": {"correlation": 8}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 40, "dur": 30, "args": {"correlation": 7, "device": 0}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "pid": 0, "tid": 7, "ts": 75, "dur": 4, "args": {"correlation": 8, "device": 0}},
    {"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7, "ts": 90, "dur": 2, "args": {"correlation": 99, "device": 0}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}])");
  EXPECT_EQ(d.problem, "");
  EXPECT_EQ(d.sample_types,
            (std::vector<std::string>{"calls/count", "wall/nanoseconds", "work/nanoseconds", "gpu/nanoseconds"}));
  const std::string cpu = "device=cuda:0,pid=1,step=5,stream=7,tid=1|";
  EXPECT_EQ(d.stacks.at(cpu + "ProfilerStep;aten::mm;cudaLaunchKernel;gemm"), (std::vector<int64_t>{0, 0, 0, 30000}));
  // A zero-length launch call is a frame of its own under what was open then.
  EXPECT_EQ(d.stacks.at(cpu + "ProfilerStep;aten::mm;cudaLaunchKernel;Memcpy DtoD"),
            (std::vector<int64_t>{0, 0, 0, 4000}));
  EXPECT_EQ(d.stacks.at("device=cuda:0,pid=0,stream=7,thread=stream 7,tid=7|cuda:0 stream 7 (no launch found);orphan"),
            (std::vector<int64_t>{0, 0, 0, 2000}));
  // The stream keeps its own wall samples, in the step their work was launched in, and no
  // work: its time is device time, in gpu. CPU samples carry the step whose window holds them.
  EXPECT_EQ(d.stacks.at("pid=0,step=5,thread=stream 7,tid=7|gemm"), (std::vector<int64_t>{1, 30000, 0, 0}));
  EXPECT_EQ(d.stacks.at("pid=0,thread=stream 7,tid=7|orphan"), (std::vector<int64_t>{1, 2000, 0, 0}));
  EXPECT_EQ(d.stacks.at("pid=1,step=5,tid=1|ProfilerStep;aten::mm"), (std::vector<int64_t>{1, 45000, 45000, 0}));
  int64_t gpu = 0;
  for (const auto& [k, v] : d.stacks) gpu += v[3];
  EXPECT_EQ(gpu, 30000 + 4000 + 2000);
}

TEST(AggregatorGpu, FlowEventsLinkWhereThereIsNoCorrelation) {
  // MTIA-style: device work linked only by an ac2g s/f pair; old category spellings.
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "Operator", "name": "forward", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 42, "pid": 1, "tid": 1, "ts": 10},
    {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 42, "pid": 17, "tid": 3, "ts": 50, "bp": "e"},
    {"ph": "X", "cat": "mtia_ccp_events", "name": "pe_exe", "pid": 17, "tid": 3, "ts": 50, "dur": 20},
    {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": "0x2b", "pid": 1, "tid": 1, "ts": 20},
    {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": "0x2b", "pid": 0, "tid": 7, "ts": 81, "bp": "e"},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": 7, "ts": 80, "dur": 6}])");
  // MTIA's device events are its kernels; a lane without args.device is the device its pid names.
  EXPECT_EQ(d.stacks.at("device=mtia:17,pid=1,stream=3,tid=1|forward;pe_exe"), (std::vector<int64_t>{0, 0, 0, 20000}));
  // An "f" bound to the enclosing slice ("bp": "e") links the kernel it falls in.
  EXPECT_EQ(d.stacks.at("device=cuda:0,pid=1,stream=7,tid=1|forward;k"), (std::vector<int64_t>{0, 0, 0, 6000}));
}

TEST(AggregatorGpu, NoDeviceWorkNoGpuSampleType) {
  auto d = ConvertText(R"([{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5}])");
  EXPECT_EQ(d.sample_types, (std::vector<std::string>{"calls/count", "wall/nanoseconds", "work/nanoseconds"}));
}

// Traces added one at a time: each keeps its own samples under its rank (given at
// Finish), and a column appears when any trace has it, with zeros for the others.
TEST(AggregatorRanks, TracesAddedInTurnKeepTheirRanksAndColumns) {
  Trace cpu =
      testing::LoadText(R"([{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5}])");
  Trace gpu = testing::LoadText(R"([
    {"ph": "X", "cat": "cuda_runtime", "name": "launch", "pid": 1, "tid": 1, "ts": 0, "dur": 4, "args": {"correlation": 3}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 6, "args": {"correlation": 3, "device": 0}}])");
  AggregateOptions ranks;
  ranks.rank_labels = true;
  Aggregator merged(ranks);
  Executor serial(1);
  merged.Add(cpu, BuildModel(cpu), BuildLanes(cpu), serial);
  merged.Add(gpu, BuildModel(gpu), BuildLanes(gpu), serial);
  auto d = testing::DecodeProfile(Gzip(EncodeProfile(std::move(merged).Finish({7, 2}))));
  EXPECT_EQ(d.problem, "");
  EXPECT_EQ(d.sample_types,
            (std::vector<std::string>{"calls/count", "wall/nanoseconds", "work/nanoseconds", "gpu/nanoseconds"}));
  EXPECT_EQ(d.stacks.at("pid=1,rank=7,tid=1|a"), (std::vector<int64_t>{1, 5000, 5000, 0}));
  EXPECT_EQ(d.stacks.at("pid=1,rank=2,tid=1|launch"), (std::vector<int64_t>{1, 4000, 4000, 0}));
  EXPECT_EQ(d.stacks.at("device=cuda:0,pid=1,rank=2,stream=7,tid=1|launch;k"), (std::vector<int64_t>{0, 0, 0, 6000}));
  EXPECT_EQ(d.stacks.at("pid=0,rank=2,tid=7|k"), (std::vector<int64_t>{1, 6000, 0, 0}));
  EXPECT_EQ(d.stacks.size(), 4u);

  // Without rank labels a single trace is what Aggregate gives.
  Aggregator one;
  one.Add(cpu, BuildModel(cpu), BuildLanes(cpu), serial);
  EXPECT_EQ(EncodeProfile(std::move(one).Finish()), EncodeProfile(Aggregate(cpu)));
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

TEST(AggregatorMemory, AllocationsWhereTheyHappenAndWhatIsLiveAtThePeak) {
  Trace trace = LoadTrace(LoadOptions{std::string(TESTDATA_DIR) + "/convert/memory.json"});
  auto p = testing::DecodeProfile(Gzip(EncodeProfile(Aggregate(trace))));
  EXPECT_EQ(p.problem, "");
  EXPECT_EQ(p.sample_types,
            (std::vector<std::string>{"calls/count", "wall/nanoseconds", "work/nanoseconds", "alloc_objects/count",
                                      "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}));
  const std::string cuda0 = "device=cuda:0,pid=1,step=2,tid=1|ProfilerStep;";
  // cuda:0 peaks at 2500 bytes (ts 55): live then are addr 200 (500, aten::add) and the
  // reused addr 100 (2000, aten::cat); the first allocation at 100 was freed at ts 30.
  EXPECT_EQ(p.stacks.at(cuda0 + "aten::empty"), (std::vector<int64_t>{0, 0, 0, 1, 1000, 0, 0}));
  EXPECT_EQ(p.stacks.at(cuda0 + "aten::add"), (std::vector<int64_t>{0, 0, 0, 1, 500, 1, 500}));
  EXPECT_EQ(p.stacks.at(cuda0 + "aten::cat"), (std::vector<int64_t>{0, 0, 0, 1, 2000, 1, 2000}));
  // The CPU allocation was live at its own peak (64 bytes at ts 6).
  EXPECT_EQ(p.stacks.at("device=cpu,pid=1,step=2,tid=1|ProfilerStep;aten::empty"),
            (std::vector<int64_t>{0, 0, 0, 1, 64, 1, 64}));
  // Thread 2 has no intervals: the allocation still gets a stack, and the step whose
  // window (on any thread of its process) holds it.
  EXPECT_EQ(p.stacks.at("device=cuda:1,pid=1,step=2,tid=2|(outside any event)"),
            (std::vector<int64_t>{0, 0, 0, 1, 4096, 1, 4096}));
}

// Without the memory sample types (the module view's profile) the others are unchanged.
TEST(AggregatorMemory, WithoutMemoryTheOtherColumnsStay) {
  Trace trace = LoadTrace(LoadOptions{std::string(TESTDATA_DIR) + "/convert/memory.json"});
  TraceModel model = BuildModel(trace);
  std::vector<LaneStacks> lanes = BuildLanes(trace, ConvertBuildOptions(model));
  AggregateOptions without;
  without.memory = false;
  auto p = testing::DecodeProfile(Gzip(EncodeProfile(Aggregate(trace, model, lanes, without))));
  EXPECT_EQ(p.problem, "");
  EXPECT_EQ(p.sample_types, (std::vector<std::string>{"calls/count", "wall/nanoseconds", "work/nanoseconds"}));
  // No "(outside any event)" stack: it held only thread 2's allocation.
  EXPECT_EQ(p.stacks.count("device=cuda:1,pid=1,step=2,tid=2|(outside any event)"), 0u);
  auto all = testing::DecodeProfile(Gzip(EncodeProfile(Aggregate(trace, model, lanes, AggregateOptions{}))));
  size_t with_time = 0;
  for (const auto& [stack, values] : all.stacks) {
    if (values[0] == 0 && values[1] == 0) continue;  // memory only
    ++with_time;
    ASSERT_TRUE(p.stacks.count(stack)) << stack;
    EXPECT_EQ(p.stacks.at(stack), (std::vector<int64_t>{values[0], values[1], values[2]})) << stack;
  }
  EXPECT_EQ(p.stacks.size(), with_time);
  EXPECT_GT(with_time, 3u);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

using testing::ConvertText;

// Steps are windows of time for every thread of their process (the autograd thread
// has no ProfilerStep of its own); pieces that span a step's end are cut there.
TEST(AggregatorSteps, EveryThreadGetsTheStepWhoseWindowHoldsIt) {
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#8", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "AddmmBackward0", "pid": 1, "tid": 2, "ts": 80, "dur": 40},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 90, "dur": 5, "args": {"correlation": 3}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 130, "dur": 10, "args": {"correlation": 3, "device": 0}}])");
  EXPECT_EQ(d.problem, "");
  // AddmmBackward0 [80,120) is cut at 100: 15 us of self time in step 7, 20 in step 8; one call.
  EXPECT_EQ(d.stacks.at("pid=1,step=7,tid=2|AddmmBackward0"), (std::vector<int64_t>{1, 15000, 15000, 0}));
  EXPECT_EQ(d.stacks.at("pid=1,step=8,tid=2|AddmmBackward0"), (std::vector<int64_t>{0, 20000, 20000, 0}));
  // Device work: the step of its launch (step 7), though it ran in step 8's window.
  EXPECT_EQ(d.stacks.at("device=cuda:0,pid=1,step=7,stream=7,tid=2|AddmmBackward0;cudaLaunchKernel;k"),
            (std::vector<int64_t>{0, 0, 0, 10000}));
  EXPECT_EQ(d.stacks.at("pid=0,step=7,tid=7|k"), (std::vector<int64_t>{1, 10000, 0, 0}));
}

TEST(AggregatorSteps, LabelsOfNumbersAreNumeric) {
  // pprof reads -tagfocus=tid=1234 as a number: numeric tids must be numeric labels.
  Profile p = Aggregate(testing::LoadText(R"([
    {"ph": "X", "name": "a", "pid": 12, "tid": 1234, "ts": 0, "dur": 5},
    {"ph": "X", "name": "b", "pid": "Spans", "tid": "stream 7", "ts": 0, "dur": 5}])"));
  ASSERT_EQ(p.label_sets.size(), 2u);
  EXPECT_TRUE(p.label_sets[0][1].numeric);
  EXPECT_EQ(p.label_sets[0][1].key, "tid");
  EXPECT_EQ(p.label_sets[0][1].num, 1234);
  EXPECT_FALSE(p.label_sets[1][1].numeric);
  EXPECT_EQ(p.label_sets[1][1].str, "stream 7");
  EXPECT_FALSE(TextOrNumberLabel("tid", "007").numeric);  // not how a number is written
  EXPECT_TRUE(TextOrNumberLabel("pid", "-1").numeric);
}

TEST(AggregatorMemory, WhatWasAllocatedBeforeTheTraceHasAFrameOfItsOwn) {
  // The peak (1800) holds 800 bytes of the trace's allocations and 1000 from before.
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10, "args": {"Addr": 1, "Bytes": 500, "Total Allocated": 1500, "Device Type": 1, "Device Id": 0}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 20, "args": {"Addr": 2, "Bytes": 300, "Total Allocated": 1800, "Device Type": 1, "Device Id": 0}}])");
  EXPECT_EQ(d.stacks.at("device=cuda:0|[allocated before the trace began]"),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 1000}));
  EXPECT_EQ(d.stacks.at("device=cuda:0,pid=1,tid=1|aten::empty"), (std::vector<int64_t>{0, 0, 0, 2, 800, 2, 800}));
  EXPECT_EQ(d.stacks.at("pid=1,tid=1|aten::empty"), (std::vector<int64_t>{1, 100000, 100000, 0, 0, 0, 0}));
  bool said = false;
  for (const std::string& c : d.comments)
    said |= c.find("1000 bytes were allocated before the trace began") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(AggregatorMemory, ATraceOfMemoryEventsOnly) {
  auto d = ConvertText(R"([
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10, "args": {"Addr": 1, "Bytes": 100, "Device Type": 1, "Device Id": 0}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 30, "args": {"Addr": 1, "Bytes": -100, "Device Type": 1, "Device Id": 0}}])");
  EXPECT_EQ(d.problem, "");
  EXPECT_EQ(d.stacks.at("device=cuda:0,pid=1,tid=1|(outside any event)"),
            (std::vector<int64_t>{0, 0, 0, 1, 100, 1, 100}));
  EXPECT_EQ(d.duration_nanos, 20000);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

// Main thread (tid 1): model.py forward -> aten::linear -> aten::addmm, which launches
// a kernel; autograd thread (tid 2): the wrapper, AddmmBackward0 under it, and
// aten::mm launching the backward kernel. Times in us.
std::string BackwardTrace(const std::string& link) {
  return R"([
    {"ph": "X", "cat": "python_function", "name": "model.py(3): forward", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 5, "dur": 40, "args": {"Sequence number": 7, "Fwd thread id": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10, "dur": 30, "args": {"Sequence number": 7, "Fwd thread id": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 15, "dur": 5, "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 10, "args": {"correlation": 1, "device": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", "pid": 1, "tid": 2, "ts": 100, "dur": 40, "args": {"Sequence number": 7, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "AddmmBackward0", "pid": 1, "tid": 2, "ts": 105, "dur": 30, "args": {"Sequence number": 7, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 110, "dur": 20},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 115, "dur": 5, "args": {"correlation": 2}},
    {"ph": "X", "cat": "kernel", "name": "gemm_bwd", "pid": 0, "tid": 7, "ts": 120, "dur": 12, "args": {"correlation": 2, "device": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "pid": 1, "tid": 2, "ts": 150, "dur": 5})" +
         link + "]";
}

const char* kFlow = R"(,
    {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 3, "pid": 1, "tid": 1, "ts": 10},
    {"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 3, "pid": 1, "tid": 2, "ts": 105, "bp": "e"})";

// Per thread (pid, tid): wall and calls, whatever the stacks.
std::map<std::string, std::pair<int64_t, int64_t>> PerThread(const testing::Decoded& d) {
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  for (const auto& [key, v] : d.stacks) {
    auto& t = out[key.substr(0, key.find('|'))];
    t.first += v[1];
    t.second += v[0];
  }
  return out;
}

TEST(AggregatorBackward, TheBackwardHangsUnderTheForwardOpThatCreatedIt) {
  for (const std::string& link : {std::string(kFlow), std::string()}) {  // by flow, by Sequence number
    auto d = ConvertText(BackwardTrace(link));
    EXPECT_EQ(d.problem, "");
    const std::string fwd = "model.py(3): forward;aten::linear;aten::addmm;";
    const std::string bwd =
        fwd + "[backward] AddmmBackward0;autograd::engine::evaluate_function: AddmmBackward0;AddmmBackward0;";
    // CPU time of the autograd thread, with its own labels, under the forward stack.
    EXPECT_EQ(d.stacks.at("pid=1,tid=2|" + bwd + "aten::mm"), (std::vector<int64_t>{1, 15000, 15000, 0}));
    EXPECT_EQ(d.stacks.at("pid=1,tid=2|" + bwd.substr(0, bwd.size() - 1)), (std::vector<int64_t>{1, 10000, 10000, 0}));
    // Its kernel too, with the launching thread's labels.
    EXPECT_EQ(d.stacks.at("device=cuda:0,pid=1,stream=7,tid=2|" + bwd + "aten::mm;cudaLaunchKernel;gemm_bwd"),
              (std::vector<int64_t>{0, 0, 0, 12000}));
    // AccumulateGrad has no forward op: it stays where it ran.
    EXPECT_EQ(d.stacks.at("pid=1,tid=2|autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"),
              (std::vector<int64_t>{1, 5000, 5000, 0}));
    // Per thread, wall and calls are those of the stacks as they ran.
    auto thread_stacks = testing::DecodeProfile(Gzip(EncodeProfile([&] {
      Trace t = testing::LoadText(BackwardTrace(link));
      TraceModel m = BuildModel(t);
      AggregateOptions o;
      o.thread_stacks = true;
      return Aggregate(t, m, BuildLanes(t, ConvertBuildOptions(m)), o);
    }())));
    EXPECT_EQ(PerThread(d), PerThread(thread_stacks));
    EXPECT_EQ(thread_stacks.stacks.at(
                  "pid=1,tid=2|autograd::engine::evaluate_function: AddmmBackward0;AddmmBackward0;aten::mm"),
              (std::vector<int64_t>{1, 15000, 15000, 0}));
  }
}

TEST(AggregatorBackward, AForwardOpOutsideTheTraceLeavesTheBackwardWhereItRan) {
  // Sequence number 8 on the backward, 7 on every forward op: no link.
  std::string t = BackwardTrace("");
  for (size_t at = t.find("\"Sequence number\": 7, \"Fwd thread id\": 1"); at != std::string::npos;
       at = t.find("\"Sequence number\": 7, \"Fwd thread id\": 1", at + 1)) {
    t.replace(at, std::string("\"Sequence number\": 7").size(), "\"Sequence number\": 8");
  }
  auto d = ConvertText(t);
  EXPECT_EQ(d.stacks.at("pid=1,tid=2|autograd::engine::evaluate_function: AddmmBackward0;AddmmBackward0;aten::mm"),
            (std::vector<int64_t>{1, 15000, 15000, 0}));
}

TEST(AggregatorBackward, ALinkThatWouldMakeACycleIsNotFollowed) {
  // A flow from an op inside the backward subtree to the backward node itself.
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: XBackward0", "pid": 1, "tid": 2, "ts": 0, "dur": 40, "args": {"Sequence number": 3, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "XBackward0", "pid": 1, "tid": 2, "ts": 5, "dur": 30, "args": {"Sequence number": 3, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::inner", "pid": 1, "tid": 2, "ts": 10, "dur": 10},
    {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 1, "pid": 1, "tid": 2, "ts": 10},
    {"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 1, "pid": 1, "tid": 2, "ts": 5, "bp": "e"}])");
  EXPECT_EQ(d.problem, "");
  EXPECT_EQ(d.stacks.at("pid=1,tid=2|autograd::engine::evaluate_function: XBackward0;XBackward0;aten::inner"),
            (std::vector<int64_t>{1, 10000, 10000}));
}

TEST(AggregatorBackward, RecursionInTheForwardStack) {
  // The forward op sits under a module that calls itself: the backward hangs under the
  // whole recursive stack, and pprof counts a frame's cum once per stack.
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "python_function", "name": "nn.Module: Block_0", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
    {"ph": "X", "cat": "python_function", "name": "nn.Module: Block_0", "pid": 1, "tid": 1, "ts": 5, "dur": 40},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 10, "dur": 10, "args": {"Sequence number": 4, "Fwd thread id": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "MulBackward0", "pid": 1, "tid": 2, "ts": 100, "dur": 7, "args": {"Sequence number": 4, "Fwd thread id": 1}}])");
  EXPECT_EQ(
      d.stacks.at("pid=1,tid=2|nn.Module: Block_0;nn.Module: Block_0;aten::mul;[backward] MulBackward0;MulBackward0"),
      (std::vector<int64_t>{1, 7000, 7000}));
}

TEST(AggregatorBackward, RootsUnderTheSameForwardStackKeepTheirOwnFrames) {
  // Two ops on one stack, one after the other, whose backward nodes differ: the
  // forward stacks are the same names, the [backward] frames are not.
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "python_function", "name": "model.py(3): forward", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 5, "dur": 10, "args": {"Sequence number": 7, "Fwd thread id": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 20, "dur": 10, "args": {"Sequence number": 8, "Fwd thread id": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "MulBackward0", "pid": 1, "tid": 2, "ts": 100, "dur": 10, "args": {"Sequence number": 7, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "MulBackward1", "pid": 1, "tid": 2, "ts": 120, "dur": 5, "args": {"Sequence number": 8, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "MulBackward0", "pid": 1, "tid": 2, "ts": 130, "dur": 3, "args": {"Sequence number": 8, "Fwd thread id": 1}}])");
  EXPECT_EQ(d.problem, "");
  const std::string fwd = "pid=1,tid=2|model.py(3): forward;aten::mul;";
  EXPECT_EQ(d.stacks.at(fwd + "[backward] MulBackward0;MulBackward0"), (std::vector<int64_t>{2, 13000, 13000}));
  EXPECT_EQ(d.stacks.at(fwd + "[backward] MulBackward1;MulBackward1"), (std::vector<int64_t>{1, 5000, 5000}));
}

TEST(AggregatorWork, BlockingWaitsAreWallButNotWork) {
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "python_function", "name": "threading.py(1030): _bootstrap", "pid": 1, "tid": 3, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "python_function", "name": "/usr/lib/python3.11/threading.py(355): wait", "pid": 1, "tid": 3, "ts": 10, "dur": 80},
    {"ph": "X", "cat": "python_function", "name": "<built-in method acquire of _thread.lock object at 0x7f01>", "pid": 1, "tid": 3, "ts": 20, "dur": 60},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 4, "ts": 0, "dur": 30}])");
  EXPECT_EQ(d.default_sample_type, "work");
  // _bootstrap's own 20 us is work; wait's 20 and acquire's 60 are not.
  EXPECT_EQ(d.stacks.at("pid=1,tid=3|threading.py(1030): _bootstrap"), (std::vector<int64_t>{1, 20000, 20000}));
  EXPECT_EQ(d.stacks.at("pid=1,tid=3|threading.py(1030): _bootstrap;/usr/lib/python3.11/threading.py(355): wait"),
            (std::vector<int64_t>{1, 20000, 0}));
  EXPECT_EQ(d.stacks.at("pid=1,tid=3|threading.py(1030): _bootstrap;/usr/lib/python3.11/threading.py(355): "
                        "wait;<built-in method acquire of _thread.lock object>"),
            (std::vector<int64_t>{1, 60000, 0}));
  // A CPU waiting for the GPU is a finding: it stays work.
  EXPECT_EQ(d.stacks.at("pid=1,tid=4|cudaStreamSynchronize"), (std::vector<int64_t>{1, 30000, 30000}));
}

// run_backward waits where the engine's thread runs the nodes (tid 2), and is the engine's
// own work where its thread runs them itself (a CPU-only backward, pid 2).
TEST(AggregatorWork, RunBackwardIsWorkWhereItsThreadRunsTheNodes) {
  auto d = ConvertText(R"([
    {"ph": "X", "cat": "python_function", "name": "<built-in method run_backward of torch._C._EngineBase object at 0x7f01>", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 1, "tid": 2, "ts": 10, "dur": 70},
    {"ph": "X", "cat": "python_function", "name": "<built-in method run_backward of torch._C._EngineBase object at 0x7f01>", "pid": 2, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: MmBackward0", "pid": 2, "tid": 1, "ts": 10, "dur": 70}])");
  const std::string rb = "<built-in method run_backward of torch._C._EngineBase object>";
  EXPECT_EQ(d.stacks.at("pid=1,tid=1|" + rb), (std::vector<int64_t>{1, 100000, 0}));
  EXPECT_EQ(d.stacks.at("pid=2,tid=1|" + rb), (std::vector<int64_t>{1, 30000, 30000}));
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

// A trace of n steps, each with one op on the main thread and one on another thread
// that spans into the next step.
std::string Steps(int n) {
  std::string s = "[";
  for (int k = 0; k < n; ++k) {
    s += std::string(k ? "," : "") + R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" +
         std::to_string(k) + R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(100 * k) + R"(, "dur": 100},)" +
         R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 2, "ts": )" + std::to_string(100 * k + 50) +
         R"(, "dur": 100})";
  }
  return s + "]";
}

Profile WithStepLabels(const std::string& json, StepLabels labels) {
  Trace t = testing::LoadText(json);
  TraceModel m = BuildModel(t);
  AggregateOptions o;
  o.step_labels = labels;
  return Aggregate(t, m, BuildLanes(t, ConvertBuildOptions(m, o)), o);
}

size_t StepLabelled(const Profile& p) {
  size_t n = 0;
  for (const Sample& s : p.samples) {
    for (const Label& l : p.label_sets[s.labels]) n += l.key == "step";
  }
  return n;
}

TEST(AggregatorSteps, StepLabelsAutoOnUpToTenSteps) {
  Profile ten = WithStepLabels(Steps(10), StepLabels::kAuto);
  Profile eleven = WithStepLabels(Steps(11), StepLabels::kAuto);
  EXPECT_GT(StepLabelled(ten), 0u);
  EXPECT_EQ(StepLabelled(eleven), 0u);
  // Without step labels nothing is cut: thread 2's op is one sample of 11 calls.
  size_t ops = 0;
  for (const Sample& s : eleven.samples) ops += eleven.frames[eleven.tree[s.node].frame].name == "op";
  EXPECT_EQ(ops, 1u);
  EXPECT_GT(StepLabelled(WithStepLabels(Steps(11), StepLabels::kOn)), 0u);
  EXPECT_EQ(StepLabelled(WithStepLabels(Steps(2), StepLabels::kOff)), 0u);
  bool said = false;
  for (const std::string& c : eleven.comments) said |= c.find("step labels: off (11 steps") == 0;
  EXPECT_TRUE(said);
  // Either way, the same time.
  auto total = [](const Profile& p) {
    int64_t n = 0;
    for (const Sample& s : p.samples) n += s.values[1];
    return n;
  };
  EXPECT_EQ(total(WithStepLabels(Steps(11), StepLabels::kOn)), total(eleven));
}

// From the uncut stacks analyze builds, the profile convert writes: cut again where step
// labels are on (3 steps, auto), as is where they are off; a flame graph's has no labels.
TEST(AggregatorSteps, FromUncutStacksTheProfileIsConvertsOwn) {
  for (const int steps : {3, 11}) {
    Trace t = testing::LoadText(Steps(steps));
    TraceModel m = BuildModel(t);
    Executor ex(2);
    const std::vector<LaneStacks> uncut = BuildLanes(t);
    AggregateOptions o;
    o.critical = true;
    EXPECT_EQ(EncodeProfile(AggregateUncut(t, m, uncut, o, ex)),
              EncodeProfile(Aggregate(t, m, BuildLanes(t, ConvertBuildOptions(m, o)), o, ex)))
        << steps;
    EXPECT_EQ(StepLabelled(AggregateUncut(t, m, uncut, o, ex)) > 0, steps == 3);
    const Profile flame = AggregateUncut(t, m, uncut, FlameGraphAggregate(false), ex);
    for (const Sample& s : flame.samples) EXPECT_TRUE(flame.label_sets[s.labels].empty());
  }
}

TEST(AggregatorDepth, DeepStacksFoldAtTheMaximumDepthAndKeepTheirTime) {
  // A chain of 6 nested intervals, each 1 us inside its parent; at most 4 frames.
  std::string s = "[";
  for (int i = 0; i < 6; ++i) {
    s += std::string(i ? "," : "") + R"({"ph": "X", "name": "f)" + std::to_string(i) +
         R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) + R"(, "dur": )" + std::to_string(2 * (6 - i)) + "}";
  }
  Trace t = testing::LoadText(s + "]");
  TraceModel m = BuildModel(t);
  AggregateOptions o;
  o.max_depth = 4;
  auto d = testing::DecodeProfile(Gzip(EncodeProfile(Aggregate(t, m, BuildLanes(t), o))));
  EXPECT_EQ(d.problem, "");
  // f0..f2 keep their 2 us of self time each; f3, f4 and f5 (2 + 2 + 2) fold into one.
  EXPECT_EQ(d.stacks.at("pid=1,tid=1|f0;f1;f2"), (std::vector<int64_t>{1, 2000, 2000}));
  EXPECT_EQ(d.stacks.at("pid=1,tid=1|f0;f1;f2;[deeper frames truncated]"), (std::vector<int64_t>{3, 6000, 6000}));
  bool said = false;
  for (const std::string& c : d.comments) said |= c.find("1 stacks deeper than 4 frames") == 0;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

// The profile, byte for byte, of a trace whose lanes are folded in segments of
// `segment` pieces on `threads` threads.
std::string Folded(const Trace& t, const TraceModel& m, AggregateOptions o, uint32_t segment, int threads) {
  o.fold_segment = segment;
  Executor ex(threads);
  return EncodeProfile(Aggregate(t, m, BuildLanes(t, ConvertBuildOptions(m, o)), o, ex));
}

// Lanes are folded in segments side by side, and the segments' trees join the profile
// in piece order: however the lanes are cut and however many threads fold them, the
// profile is the one a single fold makes (its nodes, frames, label sets and samples in
// the same order), with and without backward links, step labels and cycles.
TEST(AggregatorFold, TheProfileNeverDependsOnSegmentsOrThreads) {
  const std::string cycle = R"([
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: XBackward0", "pid": 1, "tid": 2, "ts": 0, "dur": 40, "args": {"Sequence number": 3, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "XBackward0", "pid": 1, "tid": 2, "ts": 5, "dur": 30, "args": {"Sequence number": 3, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::inner", "pid": 1, "tid": 2, "ts": 10, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "aten::other", "pid": 1, "tid": 1, "ts": 10, "dur": 10, "args": {"Sequence number": 5, "Fwd thread id": 0}},
    {"ph": "X", "cat": "cpu_op", "name": "OtherBackward0", "pid": 1, "tid": 2, "ts": 50, "dur": 10, "args": {"Sequence number": 5, "Fwd thread id": 1}},
    {"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "id": 1, "pid": 1, "tid": 2, "ts": 10},
    {"ph": "f", "cat": "fwdbwd", "name": "fwdbwd", "id": 1, "pid": 1, "tid": 2, "ts": 5, "bp": "e"}])";
  std::vector<std::pair<std::string, Trace>> traces;
  for (const std::string& json : {BackwardTrace(kFlow), BackwardTrace(""), cycle, Steps(4)})
    traces.emplace_back("text " + std::to_string(traces.size()), testing::LoadText(json));
  for (const char* real : {"/convert/memory.json", "/real/hta__call_stack__backward_thread.json",
                           "/real/torch211/lm_train.pt.trace.json.gz"}) {
    traces.emplace_back(real, LoadTrace(LoadOptions{std::string(TESTDATA_DIR) + real}));
  }
  for (const auto& [name, t] : traces) {
    TraceModel m = BuildModel(t);
    for (bool thread_stacks : {false, true}) {
      for (StepLabels steps : {StepLabels::kOn, StepLabels::kOff}) {
        AggregateOptions o;
        o.thread_stacks = thread_stacks;
        o.step_labels = steps;
        const std::string one = Folded(t, m, o, 1u << 16, 1);
        const bool big = t.intervals.size() > 1000;
        for (uint32_t segment : big ? std::vector<uint32_t>{97, 4096} : std::vector<uint32_t>{0, 1, 2, 3, 5}) {
          for (int threads : {1, 3}) {
            EXPECT_TRUE(Folded(t, m, o, segment, threads) == one)
                << name << ": segments of " << segment << ", " << threads << " threads, thread_stacks " << thread_stacks
                << ", step labels " << (steps == StepLabels::kOn ? "on" : "off");
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

// The step of device work is decided once (TraceModel::DeviceStepOf): a kernel without a
// correlation inside the stream's copy of ProfilerStep#1 is in step 1 for its wall sample
// on the stream, its gpu sample, and analyze's (so compare's) per-step kernel times.
TEST(AggregatorSteps, DeviceWorkWithoutALaunchTakesTheStepItsStreamSpanHolds) {
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {"External id": 1}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 100, "args": {"External id": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 8}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 20, "dur": 60, "args": {"External id": 1}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 10, "args": {"correlation": 7, "device": 0}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 40, "dur": 10, "args": {"device": 0}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 90, "dur": 4, "args": {"device": 0}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 120, "dur": 10, "args": {"correlation": 8, "device": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 120, "dur": 5, "args": {"correlation": 9}},
    {"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 7, "ts": 140, "dur": 10, "args": {"correlation": 9, "device": 0}}]})";
  Trace trace = testing::LoadText(json);
  TraceModel m = BuildModel(trace);
  auto step_of = [&](int64_t start_us) -> int64_t {
    for (uint32_t i = 0; i < trace.intervals.size(); ++i) {
      const Interval& iv = trace.intervals[i];
      if (iv.start_ns == start_us * 1000 && m.RoleOf(iv) == Role::kKernel) {
        const Step* s = m.DeviceStepOf(i, iv);
        return s ? s->number : -1;
      }
    }
    return -2;
  };
  EXPECT_EQ(step_of(20), 1);   // launched in step 1
  EXPECT_EQ(step_of(40), 1);   // no launch, inside the stream's ProfilerStep#1
  EXPECT_EQ(step_of(90), -1);  // no launch, after it
  EXPECT_EQ(step_of(120), 2);  // launched in step 2
  testing::Decoded d = testing::ConvertText(json);
  EXPECT_EQ(d.stacks.at("pid=0,step=1,tid=7|ProfilerStep;k2"), (std::vector<int64_t>{1, 10000, 0, 0}));
  EXPECT_EQ(d.stacks.at("device=cuda:0,pid=0,step=1,stream=7,tid=7|cuda:0 stream 7 (no launch found);k2"),
            (std::vector<int64_t>{0, 0, 0, 10000}));
  EXPECT_EQ(d.stacks.at("device=cuda:0,pid=0,stream=7,tid=7|cuda:0 stream 7 (no launch found);k2"),
            (std::vector<int64_t>{0, 0, 0, 4000}));
  AnalysisOptions per_step;
  per_step.per_step = true;
  Analysis a = Analyze(trace, m, per_step);
  for (const KernelRow& k : a.kernels) {
    const int64_t second = k.name == "k2" ? 0 : 10000;
    EXPECT_EQ(k.step_total.At(0), k.name == "k3" ? 0 : 10000) << k.name;
    EXPECT_EQ(k.step_total.At(1), second) << k.name;
  }
}

}  // namespace
}  // namespace torch2pprof
