// The what-if engine on small hand-made graphs whose replays are worked out by hand (ns).
#include "model/what_if.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace torch2pprof {
namespace {

// A graph written as the tests read it: nodes in order, each chained after the last node
// of its lane unless told otherwise.
class Builder {
 public:
  explicit Builder(int64_t start = 0) { g_.start = start; }
  // Work on `lane` over [a, b), its own time all of it.
  uint32_t Work(uint32_t lane, int64_t a, int64_t b, uint32_t tags, bool ends = true) {
    return Add(lane, a, b, b - a, tags, ends);
  }
  // A wait on `lane` over [a, b) for node `on` to end; its own time the rest after on's end.
  uint32_t Wait(uint32_t lane, int64_t a, int64_t b, uint32_t tags, uint32_t on) {
    const uint32_t v = Add(lane, a, b, b - g_.nodes[on].end, tags, true);
    g_.edges.push_back({on, v, b - g_.nodes[on].end, false, true, false});
    return v;
  }
  // Device work launched by host node `call` (lag: how far into the call it began).
  uint32_t Device(uint32_t stream, int64_t a, int64_t b, uint32_t tags, uint32_t call, int64_t lag) {
    const uint32_t v = Add(stream, a, b, b - a, tags | kTagDevice, true, true);
    g_.edges.push_back({call, v, lag, true, false, true});
    return v;
  }
  void Edge(uint32_t from, uint32_t to, int64_t lag) { g_.edges.push_back({from, to, lag, false, false, false}); }
  StepGraph Done() {
    std::stable_sort(g_.edges.begin(), g_.edges.end(),
                     [](const WhatEdge& a, const WhatEdge& b) { return a.to < b.to; });
    return g_;
  }

 private:
  // Chained after the lane's last node: a host thread keeps the gap; device work launched
  // after a gap began because of its launch (lag 0), or as far into the work before it as
  // it overlapped.
  uint32_t Add(uint32_t lane, int64_t a, int64_t b, int64_t own, uint32_t tags, bool ends, bool device = false) {
    const uint32_t v = static_cast<uint32_t>(g_.nodes.size());
    g_.nodes.push_back(WhatNode{a, b, own, tags, lane, false, ends});
    auto it = last_.find(lane);
    if (it != last_.end()) {
      const int64_t gap = a - g_.nodes[it->second].end;
      g_.edges.push_back({it->second, v, device ? std::min<int64_t>(gap, 0) : gap, false, false, false});
    }
    last_[lane] = v;
    return v;
  }
  StepGraph g_;
  std::map<uint32_t, uint32_t> last_;
};

constexpr uint32_t kHost = 1, kStream = 7, kStream2 = 8, kOther = 2;

// The host is the bound: Python 0-300, a launch 300-310, an operator 310-900; the kernel
// 315-415. Removing the Python saves its 300; halving the operator 295; the kernel on the
// Tensor Cores nothing (the host ends the step).
TEST(WhatIf, HostBoundStep) {
  Builder b;
  b.Work(kHost, 0, 300, kTagPython);
  const uint32_t call = b.Work(kHost, 300, 310, kTagLaunch);
  b.Work(kHost, 310, 900, kTagOperator);
  b.Device(kStream, 315, 415, kTagFp32Matmul, call, 15);
  const StepGraph g = b.Done();
  EXPECT_EQ(Simulate(g, 0).end, 900) << Describe(g);
  EXPECT_EQ(Simulate(g, kWhatIfNoPython).end, 600);
  EXPECT_EQ(Simulate(g, kWhatIfFewerHostOps).end, 605);
  EXPECT_EQ(Simulate(g, kWhatIfTf32).end, 900);  // removing device time of a host-bound step saves nothing
}

// The device is the bound: ten kernels of 100 queued behind each other, launched by calls
// of 10 with 0 between; the host ends at 100 and waits in a synchronization for the last
// kernel (ends 1005) until 1010. Removing the host's launch cost saves only what the first
// kernel waited for its launch (5); the kernels at half their time save half of theirs.
TEST(WhatIf, DeviceBoundStep) {
  Builder b;
  uint32_t last = 0;
  for (int i = 0; i < 10; ++i) {
    const uint32_t call = b.Work(kHost, 10 * i, 10 * i + 10, kTagLaunch);
    last = b.Device(kStream, 5 + 100 * i, 105 + 100 * i, kTagFp32Matmul, call, i == 0 ? 5 : 10);
  }
  b.Wait(kHost, 100, 1010, kTagSync, last);
  const StepGraph g = b.Done();
  EXPECT_EQ(Simulate(g, 0).end, 1010) << Describe(g);
  EXPECT_EQ(Simulate(g, kWhatIfGraphs).end, 1005);  // the first kernel starts at 0: 1000 + the sync's 5
  EXPECT_EQ(Simulate(g, kWhatIfTf32).end, 510);     // 5 + 10 x 50 + 5
  EXPECT_EQ(Simulate(g, kWhatIfTf32, true).device_ns, 500);
  EXPECT_EQ(Simulate(g, kWhatIfTf32).device_ns, 0);  // not asked
  // Without the wait the host ends at 100, the device at 1005: the device bounds it.
  EXPECT_EQ(Simulate(g, kWhatIfNoSync).end, 1005);
}

// A collective's kernel of 400 ns whose message takes 100 at the link's bus bandwidth:
// 300 of it waits for the other ranks. At the link's rate the step ends 300 sooner; a
// communication kernel whose message is unknown (link_ns -1), and compute, keep their time.
TEST(WhatIf, CollectivesAtTheLinksBandwidth) {
  Builder b;
  const uint32_t c1 = b.Work(kHost, 0, 10, kTagLaunch);
  b.Device(kStream, 10, 110, 0, c1, 10);
  const uint32_t c2 = b.Work(kHost, 10, 20, kTagLaunch);
  const uint32_t nccl = b.Device(kStream, 110, 510, kTagCommunication, c2, 0);
  const uint32_t c3 = b.Work(kHost, 20, 30, kTagLaunch);
  const uint32_t unknown = b.Device(kStream, 510, 610, kTagCommunication, c3, 0);
  StepGraph g = b.Done();
  g.nodes[nccl].link_ns = 100;
  EXPECT_EQ(Simulate(g, 0).end, 610) << Describe(g);
  EXPECT_EQ(Simulate(g, kWhatIfLink).end, 310);
  g.nodes[unknown].link_ns = -1;
  g.nodes[nccl].link_ns = 500;  // never longer than recorded
  EXPECT_EQ(Simulate(g, kWhatIfLink).end, 610);
  EXPECT_EQ(TagsOf(kWhatIfLink), uint32_t{kTagCommunication});
}

// A synchronization in the middle of the step: the host launches k1 (0-10), waits for it
// (10-510, k1 ends 500), then runs 400 of operators that launch k2 at the end (910-920,
// k2 920-1020). Without the wait, the operators run beside k1: the host reaches k2's
// launch at 420, but k2 queues behind k1 (500): 500-600, step end 600. Saves 420.
TEST(WhatIf, SynchronizationInTheMiddle) {
  Builder b;
  const uint32_t c1 = b.Work(kHost, 0, 10, kTagLaunch);
  const uint32_t k1 = b.Device(kStream, 10, 500, 0, c1, 10);
  b.Wait(kHost, 10, 510, kTagSync, k1);
  b.Work(kHost, 510, 910, kTagOperator);
  const uint32_t c2 = b.Work(kHost, 910, 920, kTagLaunch);
  const uint32_t k2 = b.Device(kStream, 920, 1020, 0, c2, 10);
  (void)k2;
  const StepGraph g = b.Done();
  EXPECT_EQ(Simulate(g, 0).end, 1020) << Describe(g);
  EXPECT_EQ(Simulate(g, kWhatIfNoSync).end, 600);
}

// Two streams with a wait: k2 on stream 8 waits for k1 on stream 7 (an event), launched
// long before. Halving k1 (an FP32 matmul) moves k2 as much: 200 of k1's 400.
TEST(WhatIf, TwoStreamsWithAWait) {
  Builder b;
  const uint32_t c1 = b.Work(kHost, 0, 10, kTagLaunch);
  const uint32_t c2 = b.Work(kHost, 10, 20, kTagLaunch);
  b.Work(kHost, 20, 100, kTagPython);
  const uint32_t k1 = b.Device(kStream, 10, 410, kTagFp32Matmul, c1, 10);
  const uint32_t k2 = b.Device(kStream2, 415, 615, 0, c2, 10);
  b.Edge(k1, k2, 5);
  const StepGraph g = b.Done();
  EXPECT_EQ(Simulate(g, 0).end, 615) << Describe(g);
  EXPECT_EQ(Simulate(g, kWhatIfTf32).end, 415);
}

// A sleep that nothing else waits on saves exactly itself; one beside a longer wait for
// the device saves only what sticks out.
TEST(WhatIf, SleepSavesItselfWhereNothingElseWaits) {
  Builder b;
  b.Work(kHost, 0, 100, kTagOperator);
  b.Work(kHost, 100, 30100, kTagSleep);
  b.Work(kHost, 30100, 30200, kTagOperator);
  const StepGraph g = b.Done();
  EXPECT_EQ(Simulate(g, 0).end, 30200);
  EXPECT_EQ(Simulate(g, kWhatIfNoSleep).end, 200);

  Builder d;
  const uint32_t call = d.Work(kHost, 0, 10, kTagLaunch);
  const uint32_t k = d.Device(kStream, 10, 5010, 0, call, 10);
  d.Work(kHost, 10, 3010, kTagSleep);
  d.Wait(kHost, 3010, 5020, kTagSync, k);
  const StepGraph h = d.Done();
  EXPECT_EQ(Simulate(h, 0).end, 5020) << Describe(h);
  EXPECT_EQ(Simulate(h, kWhatIfNoSleep).end, 5020);  // the device still takes until 5010
}

// Another thread wakes on the host's signal and the host joins it: shrinking the other
// thread's operators shortens the join; removing the host's Python before the signal moves
// the other thread's start.
TEST(WhatIf, AJoinFollowsTheThreadItWaitsFor) {
  Builder b;
  b.Work(kHost, 0, 100, kTagPython);
  const uint32_t head = b.Work(kHost, 100, 100, kTagThreadWait);
  const uint32_t w = b.Work(kOther, 110, 610, kTagOperator, false);
  b.Edge(head, w, 10);
  b.Wait(kHost, 100, 620, kTagThreadWait, w);
  const StepGraph g = b.Done();
  EXPECT_EQ(Simulate(g, 0).end, 620) << Describe(g);
  EXPECT_EQ(Simulate(g, kWhatIfFewerHostOps).end, 370);
  EXPECT_EQ(Simulate(g, kWhatIfNoPython).end, 520);
}

// A pageable copy made pinned: the host no longer waits for it (its call takes a launch's
// time) and the copy runs at twice the bandwidth.
TEST(WhatIf, PageableCopyMadePinned) {
  Builder b;
  const uint32_t head = b.Work(kHost, 0, 0, kTagCopyCall);
  const uint32_t copy = b.Device(kStream, 20, 420, kTagPageableCopy, head, 20);
  b.Wait(kHost, 0, 430, kTagCopyCall, copy);
  b.Work(kHost, 430, 830, kTagOperator);
  StepGraph g = b.Done();
  g.launch_call_ns = 5;
  EXPECT_EQ(Simulate(g, 0).end, 830) << Describe(g);
  // The copy [20, 220); the call 5; the operator [5, 405): the step ends at 405.
  EXPECT_EQ(Simulate(g, kWhatIfPinned).end, 405);
}

// A node that began before the step keeps its time; with no edges a node starts as recorded.
TEST(WhatIf, FixedAndUnorderedNodesKeepTheirTimes) {
  StepGraph g;
  g.start = 100;
  g.nodes.push_back(WhatNode{50, 300, 250, kTagDevice | kTagFp32Matmul, kStream, true, false});
  g.nodes.push_back(WhatNode{300, 400, 100, kTagDevice | kTagFp32Matmul, kStream, false, true});
  g.edges.push_back({0, 1, 0, false, false, false});
  EXPECT_EQ(Simulate(g, 0).end, 400);
  EXPECT_EQ(Simulate(g, kWhatIfTf32).end, 350);  // the fixed node is not halved
}

}  // namespace
}  // namespace torch2pprof
