// The model's rules, one test each, on small hand-made traces; expectations by hand.
#include "torch2pprof/stages/trace_model.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {

using testing::LoadText;

// An X event: pid, tid, ts and dur in µs, and args as JSON text.
std::string X(const std::string& cat, const std::string& name, int pid, int tid, int ts, int dur,
              const std::string& args = "{}") {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": )" + std::to_string(pid) +
         R"(, "tid": )" + std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
         std::to_string(dur) + R"(, "args": )" + args + "}";
}

std::string Flow(const char* cat, char ph, int id, int pid, int tid, int ts) {
  return R"({"ph": ")" + std::string(1, ph) + R"(", "cat": ")" + cat + R"(", "name": ")" + cat + R"(", "id": )" +
         std::to_string(id) + R"(, "pid": )" + std::to_string(pid) + R"(, "tid": )" + std::to_string(tid) +
         R"(, "ts": )" + std::to_string(ts) + (ph == 'f' ? R"(, "bp": "e"})" : "}");
}

std::string Events(const std::vector<std::string>& events) {
  std::string s = "[";
  for (const auto& e : events) s += (s.size() > 1 ? ",\n" : "") + e;
  return s + "]";
}

std::string Name(const Trace& t, uint32_t e) { return std::string(t.strings.Get(EventAt(t, e).name)); }

uint32_t Find(const Trace& t, const std::string& name) {
  for (uint32_t i = 0; i < t.intervals.size(); ++i) {
    if (t.strings.Get(t.intervals[i].name) == name) return i;
  }
  ADD_FAILURE() << "no interval " << name;
  return 0;
}

TEST(TraceModel, DevicesHaveOneName) {
  Trace t = LoadText(Events({
      X("cpu_op", "aten::mm", 1, 1, 0, 10),
      X("kernel", "gemm", 0, 7, 2, 3, R"({"device": 1})"),
      X("mtia_ccp_events", "pe_exe", 17, 3, 2, 3),
      R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": {"Bytes": 8, "Device Type": 1, "Device Id": 1}})",
      R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": {"Bytes": 8, "Device Type": 0, "Device Id": -1}})",
  }));
  TraceModel m = BuildModel(t);
  ASSERT_EQ(m.lanes.size(), 3u);
  EXPECT_FALSE(m.lanes[0].device);
  EXPECT_EQ(m.lanes[0].device_name, "");
  EXPECT_EQ(m.lanes[1].device_name, "cuda:1");   // args.device, not the pid
  EXPECT_EQ(m.lanes[2].device_name, "mtia:17");  // no args.device: the pid
  ASSERT_EQ(m.memory.size(), 2u);
  EXPECT_EQ(m.memory[0].device, "cpu");
  EXPECT_EQ(m.memory[1].device, "cuda:1");
}

// Streams, memory timelines and deviceProperties are named by one rule, so they join: an
// MTIA device's properties name it mtia, and a HIP memory timeline (torch's device type 6)
// is the cuda device its streams run on.
TEST(TraceModel, DevicePropertiesAndMemoryJoinTheirStreams) {
  Trace t = LoadText(
      R"({"deviceProperties": [{"id": 1, "name": "MI250"}, {"id": 17, "name": "MTIA"},
                                              {"id": 2, "name": "unseen"}],
                         "traceEvents": )" +
      Events({
          X("kernel", "gemm", 0, 7, 2, 3, R"({"device": 1})"),
          X("mtia_ccp_events", "pe_exe", 17, 3, 2, 3),
          R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": {"Bytes": 8, "Device Type": 6, "Device Id": 1}})",
      }) +
      "}");
  TraceModel m = BuildModel(t);
  ASSERT_EQ(m.devices.size(), 3u);
  EXPECT_EQ(m.devices[0].device, m.lanes[0].device_name);
  EXPECT_EQ(m.devices[0].device, "cuda:1");
  EXPECT_EQ(m.devices[1].device, m.lanes[1].device_name);
  EXPECT_EQ(m.devices[1].device, "mtia:17");
  EXPECT_EQ(m.devices[2].device, "cuda:2");  // no stream: cuda
  ASSERT_EQ(m.memory.size(), 1u);
  EXPECT_EQ(m.memory[0].device, m.lanes[0].device_name);
  EXPECT_EQ(DeviceName("cuda", -1), "cuda");
}

// What a category means is decided once (RoleOfCategory, case-insensitive): the loader
// keeps a device annotation's External id whatever its spelling, so the model ties it to
// its host step, and the kernel in it without a launch gets that step.
TEST(TraceModel, ACategorySpelledOtherwiseMeansTheSame) {
  for (const char* cat : {"gpu_user_annotation", "GPU_User_Annotation"}) {
    Trace t = LoadText(Events({
        X("user_annotation", "ProfilerStep#1", 1, 1, 0, 100, R"({"External id": 5})"),
        X(cat, "ProfilerStep#1", 0, 7, 200, 100, R"({"External id": 5, "correlation": 77})"),
        X("kernel", "k", 0, 7, 210, 10, R"({"device": 0})"),
    }));
    TraceModel m = BuildModel(t);
    ASSERT_EQ(m.steps.size(), 1u) << cat;
    const uint32_t k = Find(t, "k");
    const Step* step = m.DeviceStepOf(k, t.intervals[k]);
    ASSERT_NE(step, nullptr) << cat;
    EXPECT_EQ(step->number, 1) << cat;
  }
}

// The autograd engine runs a backward's nodes on its own thread where the tensors are on
// a device, and on the thread that called backward() on a CPU: there run_backward is the
// engine's own time, not a wait for another thread.
TEST(TraceModel, RunBackwardWaitsUnlessItsThreadRunsTheNodes) {
  const std::string run_backward = "<built-in method run_backward of torch._C._EngineBase object at 0x7f00>";
  const std::string node = "autograd::engine::evaluate_function: MmBackward0";
  // On a device: the nodes on the engine's thread (tid 2). Process 2: the CPU case.
  Trace t = LoadText(Events({
      X("python_function", run_backward, 1, 1, 0, 100),
      X("cpu_op", node, 1, 2, 10, 50),
      X("python_function", run_backward, 2, 1, 0, 100),
      X("cpu_op", node, 2, 1, 10, 50),
      X("python_function", "<built-in function sleep>", 2, 3, 0, 100),
  }));
  TraceModel m = BuildModel(t);
  ASSERT_EQ(m.lanes.size(), 4u);
  auto own = [&](const char* pid, const char* tid) {
    for (size_t l = 0; l < t.lanes.size(); ++l) {
      if (t.lanes[l].pid == pid && t.lanes[l].tid == tid) return m.lanes[l].runs_own_backward;
    }
    ADD_FAILURE() << "no lane " << pid << "/" << tid;
    return false;
  };
  EXPECT_FALSE(own("1", "1"));
  EXPECT_FALSE(own("1", "2"));  // it runs nodes, but for the caller, who waits for it
  EXPECT_TRUE(own("2", "1"));
  EXPECT_FALSE(own("2", "3"));
  auto event = [&](const std::string& name, const char* pid) -> const Interval& {
    for (const Interval& iv : t.intervals) {
      if (t.strings.Get(iv.name) == name && t.lanes[iv.lane].pid == pid) return iv;
    }
    ADD_FAILURE() << "no " << name << " in " << pid;
    return t.intervals[0];
  };
  EXPECT_TRUE(m.Has(event(run_backward, "1"), kRunBackwardName));
  EXPECT_TRUE(m.Has(event(node, "1"), kBackwardNodeName));
  EXPECT_TRUE(m.Waits(event(run_backward, "1"), true));
  EXPECT_FALSE(m.Waits(event(run_backward, "2"), true));
  EXPECT_TRUE(m.Waits(event("<built-in function sleep>", "2"), true));  // a sleep waits on every thread
  EXPECT_FALSE(m.Waits(event(node, "2"), false));
}

TEST(TraceModel, StepsAreHostSideAndHoldEveryThreadOfTheirProcess) {
  // torch >= 2.0 writes each step twice: on the host and on the GPU stream.
  Trace t = LoadText(Events({
      X("user_annotation", "ProfilerStep#4", 1, 1, 0, 100, R"({"External id": 1})"),
      X("user_annotation", "ProfilerStep#5", 1, 1, 100, 50, R"({"External id": 9})"),
      X("gpu_user_annotation", "ProfilerStep#4", 0, 7, 20, 120, R"({"External id": 1})"),
      X("cpu_op", "AddmmBackward0", 1, 2, 90, 20),  // the autograd thread, across the bound
      X("cpu_op", "other process", 2, 1, 10, 10),
  }));
  TraceModel m = BuildModel(t);
  ASSERT_EQ(m.steps.size(), 2u);
  EXPECT_EQ(m.steps[0].number, 4);
  EXPECT_EQ(m.steps[1].number, 5);
  // Lanes in order of first appearance: 0 main thread, 1 GPU stream, 2 autograd, 3 other process.
  ASSERT_EQ(m.lanes.size(), 4u);
  auto step_at = [&](uint32_t lane, int64_t t) { return m.StepAt(lane, t) ? m.StepAt(lane, t)->number : -1; };
  EXPECT_EQ(step_at(0, 50000), 4);
  EXPECT_EQ(step_at(2, 95000), 4);    // the autograd thread
  EXPECT_EQ(step_at(2, 100000), 5);   // a window is [start, end)
  EXPECT_EQ(step_at(2, 150000), -1);  // after the last step
  EXPECT_EQ(step_at(3, 15000), -1);   // another process has no steps
  EXPECT_EQ(step_at(1, 30000), -1);   // device lanes take the step of their launch
  auto cuts = m.StepBoundaries();
  EXPECT_EQ(cuts[0], (std::vector<int64_t>{0, 100000, 150000}));
  EXPECT_EQ(cuts[2], cuts[0]);
  EXPECT_TRUE(cuts[1].empty());
  EXPECT_TRUE(cuts[3].empty());
  // The device annotation is launched by the host annotation with its External id.
  const Launch* l = m.LaunchOf(2);  // the third interval in file order
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(Name(t, l->host_event), "ProfilerStep#4");
  EXPECT_EQ(m.StepOf(*l)->number, 4);
}

TEST(TraceModel, OverlappingStepsTheLatestStartedWins) {
  Trace t = LoadText(Events({
      X("cpu_op", "ProfilerStep#1", 1, 1, 0, 100),
      X("cpu_op", "ProfilerStep#2", 1, 2, 50, 100),
  }));
  TraceModel m = BuildModel(t);
  EXPECT_EQ(m.StepAt(0, 40000)->number, 1);
  EXPECT_EQ(m.StepAt(0, 60000)->number, 2);
  EXPECT_EQ(m.StepAt(0, 120000)->number, 2);
}

TEST(TraceModel, LaunchesByCorrelationThenByFlow) {
  Trace t = LoadText(Events({
      X("cpu_op", "aten::mm", 1, 1, 0, 100),
      X("cuda_runtime", "cudaLaunchKernel", 1, 1, 10, 5, R"({"correlation": 7})"),
      X("cuda_runtime", "cudaMemcpyAsync", 1, 1, 20, 0, R"({"correlation": 8})"),
      X("mtia_runtime", "launch", 1, 1, 40, 5),  // no correlation: the flow finds it
      X("kernel", "gemm", 0, 7, 30, 10, R"({"correlation": 7, "device": 0})"),
      X("gpu_memcpy", "Memcpy", 0, 7, 45, 2, R"({"correlation": 8, "device": 0})"),
      X("kernel", "by_flow", 0, 7, 50, 10, R"({"device": 0})"),
      X("kernel", "by_flow_outside", 0, 7, 70, 10, R"({"device": 0})"),
      X("kernel", "orphan", 0, 7, 90, 1, R"({"correlation": 99, "device": 0})"),
      Flow("ac2g", 's', 5, 1, 1, 41),
      Flow("ac2g", 'f', 5, 0, 7, 55),  // inside by_flow: bound to the event it falls in
      Flow("ac2g", 's', 6, 1, 1, 60),
      Flow("ac2g", 'f', 6, 0, 7, 70),
  }));
  TraceModel m = BuildModel(t);
  auto launch = [&](const std::string& name) { return m.LaunchOf(Find(t, name)); };
  ASSERT_NE(launch("gemm"), nullptr);
  EXPECT_EQ(Name(t, launch("gemm")->host_event), "cudaLaunchKernel");
  EXPECT_EQ(launch("gemm")->ts_ns, 10000);
  // A zero-length launch call is an event too (numbered after the intervals).
  uint32_t memcpy = 0;
  for (uint32_t e = 0; e < EventCount(t); ++e) {
    if (Name(t, e) == "Memcpy") memcpy = e;
  }
  ASSERT_NE(m.LaunchOf(memcpy), nullptr);
  EXPECT_EQ(Name(t, m.LaunchOf(memcpy)->host_event), "cudaMemcpyAsync");
  EXPECT_GE(m.LaunchOf(memcpy)->host_event, t.intervals.size());
  ASSERT_NE(launch("by_flow"), nullptr);
  EXPECT_EQ(Name(t, launch("by_flow")->host_event), "launch");  // the runtime call open at the flow start
  EXPECT_EQ(launch("by_flow")->ts_ns, 41000);
  ASSERT_NE(launch("by_flow_outside"), nullptr);
  EXPECT_EQ(launch("by_flow_outside")->host_event, Launch::kNoEvent);  // a point on the lane
  EXPECT_EQ(launch("by_flow_outside")->lane, 0u);
  EXPECT_EQ(launch("orphan"), nullptr);
}

TEST(TraceModel, BackwardNodesLinkToTheForwardOpThatCreatedThem) {
  // Main thread (tid 1): two forward ops with sequence 10 (aten::linear holds aten::addmm),
  // one with 11; autograd thread (tid 2): the evaluate_function wrappers and their nodes.
  Trace t = LoadText(Events({
      X("cpu_op", "aten::linear", 1, 1, 0, 20, R"({"Sequence number": 10, "Fwd thread id": 0})"),
      X("cpu_op", "aten::addmm", 1, 1, 5, 10, R"({"Sequence number": 10, "Fwd thread id": 0})"),
      X("cpu_op", "aten::mul", 1, 1, 30, 10, R"({"Sequence number": 11, "Fwd thread id": 0})"),
      X("cpu_op", "autograd::engine::evaluate_function: MulBackward0", 1, 2, 100, 20,
        R"({"Sequence number": 11, "Fwd thread id": 1})"),
      X("cpu_op", "MulBackward0", 1, 2, 102, 15, R"({"Sequence number": 11, "Fwd thread id": 1})"),
      X("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 1, 2, 130, 20,
        R"({"Sequence number": 10, "Fwd thread id": 1})"),
      X("cpu_op", "AddmmBackward0", 1, 2, 131, 15, R"({"Sequence number": 10, "Fwd thread id": 1})"),
      X("cpu_op", "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 1, 2, 160, 5),
      X("cpu_op", "autograd::engine::evaluate_function: ExpBackward0", 1, 2, 170, 5,
        R"({"Sequence number": 3, "Fwd thread id": 1})"),  // its forward op is outside the trace
      Flow("fwdbwd", 's', 1, 1, 1, 30),
      Flow("fwdbwd", 'f', 1, 1, 2, 102),
  }));
  TraceModel m = BuildModel(t);
  ASSERT_EQ(m.backward.size(), 2u);
  // By the flow: the root is the wrapper that carries the node's sequence number.
  EXPECT_EQ(Name(t, m.backward[0].backward), "autograd::engine::evaluate_function: MulBackward0");
  EXPECT_EQ(Name(t, m.backward[0].forward), "aten::mul");
  EXPECT_TRUE(m.backward[0].by_flow);
  // By sequence number alone: the latest forward op with it (addmm, inside linear).
  EXPECT_EQ(Name(t, m.backward[1].backward), "autograd::engine::evaluate_function: AddmmBackward0");
  EXPECT_EQ(Name(t, m.backward[1].forward), "aten::addmm");
  EXPECT_FALSE(m.backward[1].by_flow);
}

TEST(TraceModel, BackwardLinksUseTheForwardThreadTheFlowsName) {
  // Two threads ran forward ops with sequence 5; a flow says the profiler's thread 1 is tid 3.
  Trace t = LoadText(Events({
      X("cpu_op", "fwd_on_3", 1, 3, 0, 10, R"({"Sequence number": 5, "Fwd thread id": 0})"),
      X("cpu_op", "fwd_on_4", 1, 4, 20, 10, R"({"Sequence number": 5, "Fwd thread id": 0})"),
      X("cpu_op", "flow_forward", 1, 3, 40, 10, R"({"Sequence number": 6, "Fwd thread id": 0})"),
      X("cpu_op", "FlowBackward0", 1, 2, 100, 10, R"({"Sequence number": 6, "Fwd thread id": 1})"),
      X("cpu_op", "SeqBackward0", 1, 2, 120, 10, R"({"Sequence number": 5, "Fwd thread id": 1})"),
      Flow("fwdbwd", 's', 9, 1, 3, 40),
      Flow("fwdbwd", 'f', 9, 1, 2, 100),
  }));
  TraceModel m = BuildModel(t);
  ASSERT_EQ(m.backward.size(), 2u);
  EXPECT_EQ(Name(t, m.backward[1].backward), "SeqBackward0");
  EXPECT_EQ(Name(t, m.backward[1].forward), "fwd_on_3");  // not the later fwd_on_4 of another thread
}

TEST(TraceModel, SeveralFlowsEndingAtOneBackwardRootTheSmallestIdWins) {
  // Two fwdbwd flows end at one backward node, from two forward ops: the flow with the
  // smallest id (Kineto numbers them in order) gives the forward op, whichever way the
  // ids fall — a written rule, not a hash map's iteration order.
  for (bool first_is_smaller : {true, false}) {
    const int a = first_is_smaller ? 3 : 50, b = first_is_smaller ? 50 : 3;
    Trace t = LoadText(Events({
        X("cpu_op", "aten::a", 1, 1, 0, 10, R"({"Sequence number": 7, "Fwd thread id": 0})"),
        X("cpu_op", "aten::b", 1, 1, 20, 10, R"({"Sequence number": 8, "Fwd thread id": 0})"),
        X("cpu_op", "XBackward0", 1, 2, 100, 10, R"({"Sequence number": 7, "Fwd thread id": 1})"),
        Flow("fwdbwd", 's', a, 1, 1, 5),
        Flow("fwdbwd", 'f', a, 1, 2, 100),
        Flow("fwdbwd", 's', b, 1, 1, 25),
        Flow("fwdbwd", 'f', b, 1, 2, 100),
    }));
    TraceModel m = BuildModel(t);
    ASSERT_EQ(m.backward.size(), 1u);
    EXPECT_EQ(Name(t, m.backward[0].forward), first_is_smaller ? "aten::a" : "aten::b") << a << ", " << b;
  }
}

TEST(TraceModel, AFlowIdStartedTwiceLinksTheFirstStart) {
  // One fwdbwd id started on two forward ops: the start met first (lanes in order of
  // appearance, then time) gives the forward op, wherever the second one is written.
  for (bool later_written_first : {false, true}) {
    std::vector<std::string> events = {
        X("cpu_op", "aten::first", 1, 1, 0, 10, R"({"Sequence number": 7, "Fwd thread id": 0})"),
        X("cpu_op", "aten::second", 1, 1, 20, 10, R"({"Sequence number": 7, "Fwd thread id": 0})"),
        X("cpu_op", "XBackward0", 1, 2, 100, 10, R"({"Sequence number": 7, "Fwd thread id": 1})"),
        Flow("fwdbwd", 's', 5, 1, 1, 5),
        Flow("fwdbwd", 's', 5, 1, 1, 25),
        Flow("fwdbwd", 'f', 5, 1, 2, 100),
    };
    if (later_written_first) std::swap(events[3], events[4]);
    Trace t = LoadText(Events(events));
    TraceModel m = BuildModel(t);
    ASSERT_EQ(m.backward.size(), 1u);
    EXPECT_EQ(Name(t, m.backward[0].forward), "aten::first") << later_written_first;
    EXPECT_TRUE(m.backward[0].by_flow);
  }
}

TEST(TraceModel, MemoryPeakAndWhatWasLiveBeforeTheTrace) {
  // 1000 bytes were allocated before the trace: Total Allocated says so from the start.
  Trace t = LoadText(Events({
      X("cpu_op", "aten::empty", 1, 1, 0, 100),
      R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10, "args": {"Addr": 1, "Bytes": 500, "Total Allocated": 1500, "Device Type": 1, "Device Id": 0}})",
      R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 20, "args": {"Addr": 2, "Bytes": 300, "Total Allocated": 1800, "Device Type": 1, "Device Id": 0}})",
      R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 30, "args": {"Addr": 1, "Bytes": -500, "Total Allocated": 1300, "Device Type": 1, "Device Id": 0}})",
      R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 40, "args": {"Addr": 99, "Bytes": -200, "Total Allocated": 1100, "Device Type": 1, "Device Id": 0}})",
  }));
  TraceModel m = BuildModel(t);
  ASSERT_EQ(m.memory.size(), 1u);
  const MemoryTimeline& tl = m.memory[0];
  EXPECT_TRUE(tl.from_totals);
  EXPECT_EQ(tl.peak_bytes, 1800);
  EXPECT_EQ(tl.peak_ns, 20000);
  EXPECT_EQ(tl.live_at_peak.size(), 2u);
  EXPECT_EQ(tl.live_at_peak_bytes, 800);
  EXPECT_EQ(tl.before_trace_bytes, 1000);
  EXPECT_EQ(tl.allocations, 2u);
  EXPECT_EQ(tl.frees, 2u);
  EXPECT_EQ(tl.freed_bytes, 700);
}

TEST(TraceModel, TwoThreadsBuildTheSameModel) {
  // Launches, backward links and memory are found side by side with threads: the same
  // model, on a real trace that has all three.
  Trace t = LoadTrace(LoadOptions{std::string(TESTDATA_DIR) + "/real/torch211/lm_train.pt.trace.json.gz"});
  TraceModel one = BuildModel(t, 1), two = BuildModel(t, 2);
  ASSERT_GT(one.launches.size(), 1000u);
  ASSERT_GT(one.backward.size(), 100u);
  ASSERT_FALSE(one.memory.empty());
  ASSERT_EQ(one.launches.size(), two.launches.size());
  for (size_t k = 0; k < one.launches.size(); ++k) {
    const Launch &a = one.launches[k], &b = two.launches[k];
    EXPECT_TRUE(a.device_event == b.device_event && a.host_event == b.host_event && a.lane == b.lane &&
                a.ts_ns == b.ts_ns)
        << k;
  }
  ASSERT_EQ(one.backward.size(), two.backward.size());
  for (size_t k = 0; k < one.backward.size(); ++k) {
    const BackwardLink &a = one.backward[k], &b = two.backward[k];
    EXPECT_TRUE(a.backward == b.backward && a.forward == b.forward && a.by_flow == b.by_flow) << k;
    if (k > 0) {
      EXPECT_LT(one.backward[k - 1].backward, a.backward);  // by backward, once each
    }
  }
  ASSERT_EQ(one.memory.size(), two.memory.size());
  for (size_t k = 0; k < one.memory.size(); ++k) {
    EXPECT_EQ(one.memory[k].events, two.memory[k].events);
    EXPECT_EQ(one.memory[k].peak_bytes, two.memory[k].peak_bytes);
    EXPECT_EQ(one.memory[k].live_at_peak, two.memory[k].live_at_peak);
  }
  EXPECT_EQ(one.steps.size(), two.steps.size());
}

TEST(TraceModel, NameFlags) {
  EXPECT_EQ(StepNumber("ProfilerStep#12"), 12);
  EXPECT_EQ(StepNumber("ProfilerStep#"), -1);
  EXPECT_EQ(StepNumber("ProfilerStep#1a"), -1);
  EXPECT_EQ(NameFlags("ProfilerStep#3"), kStepName);
  EXPECT_EQ(NameFlags("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"), kDataLoaderName);
  EXPECT_EQ(NameFlags("enumerate(DataPipe)#ShardingFilter"), kDataLoaderName);
  EXPECT_EQ(NameFlags("gloo:all_reduce"), kCommName);
  EXPECT_EQ(NameFlags("nccl:all_reduce"), kCommName | kNcclName);
  EXPECT_EQ(NameFlags("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), kNcclName);
  EXPECT_EQ(NameFlags("Optimizer.step#AdamW.step"), kWrapperName);
  EXPECT_EQ(NameFlags("aten::mm"), 0);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

TEST(TraceModelMemory, ByteSumsPastSixtyFourBitsAreHeldThereAndCounted) {
  // Four allocations of 2^62 - 1 bytes: their sum passes 2^63. It stops at the largest value.
  std::string json = "[";
  for (int k = 0; k < 4; ++k) {
    json += std::string(k ? "," : "") + R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
            std::to_string(k) + R"(, "args": {"Device Type": 1, "Device Id": 0, "Addr": )" + std::to_string(k + 1) +
            R"(, "Bytes": 4611686018427387903}})";
  }
  Trace t = testing::LoadText(json + "]");
  TraceModel m = BuildModel(t);
  ASSERT_EQ(m.memory.size(), 1u);
  EXPECT_EQ(m.memory[0].allocated_bytes, INT64_MAX);
  EXPECT_EQ(m.memory[0].peak_bytes, INT64_MAX);
  EXPECT_GT(m.memory[0].saturated, 0u);
}

TEST(TraceModelTime, TimesAreKeptWithinTwoToTheSixtyTwoNanoseconds) {
  // Any two times of a trace are then less than 2^63 apart: the span cannot wrap.
  Trace t = testing::LoadText(R"([
    {"ph": "X", "name": "early", "pid": 1, "tid": 1, "ts": -4611686018427387, "dur": 1},
    {"ph": "X", "name": "late", "pid": 1, "tid": 1, "ts": 4611686018427387, "dur": 1},
    {"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 0, "dur": 5}])");
  EXPECT_EQ(t.intervals.size(), 2u);  // "late" ends past 2^62 ns
  EXPECT_EQ(t.stats.skipped[static_cast<int>(Skip::kBadValue)], 1u);
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const Interval& iv : t.intervals) first = std::min(first, iv.start_ns), last = std::max(last, iv.end_ns);
  int64_t span;
  EXPECT_FALSE(__builtin_sub_overflow(last, first, &span));
  EXPECT_GT(span, 0);
}

}  // namespace
}  // namespace torch2pprof
