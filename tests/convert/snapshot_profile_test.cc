// The snapshot profile's replay and frame rules on snapshots built here: the peak found
// backwards from the dump, the blocks live at it by the three ways a block can be live,
// and the frames hidden as documented (docs/reference.md, "Memory snapshots").
#include "convert/snapshot_profile.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace torch2pprof {
namespace {

class Snapshot {
 public:
  Snapshot() { s.stacks.emplace_back(); }
  // A one-frame stack, for telling samples apart.
  uint32_t Stack(const std::string& name) {
    s.frames.push_back(SnapshotFrame{s.strings.Intern(name), s.strings.Intern("x.py"), 1});
    s.stacks.push_back({static_cast<uint32_t>(s.frames.size() - 1)});
    return static_cast<uint32_t>(s.stacks.size() - 1);
  }
  void Event(SnapshotAction a, int64_t addr, int64_t size, uint32_t stack = 0) {
    if (s.traces.empty()) s.traces.emplace_back();
    SnapshotEvent e;
    e.action = a, e.addr = addr, e.size = size, e.stack = stack, e.time_us = static_cast<int64_t>(s.traces[0].size());
    s.traces[0].push_back(e);
  }
  MemorySnapshot s;
};

// inuse_space by the stack's one frame ("x x.py:1").
std::map<std::string, int64_t> Inuse(const Profile& p) {
  std::map<std::string, int64_t> out;
  for (const Sample& smp : p.samples) {
    uint32_t node = smp.node;
    std::string name;
    while (node != 0)
      name = p.frames[p.tree[node].frame].name + (name.empty() ? "" : ";" + name), node = p.tree[node].parent;
    if (smp.values[0]) out[name] += smp.values[0];
  }
  return out;
}

TEST(SnapshotProfile, PeakAndWhatIsLiveThere) {
  Snapshot b;
  const uint32_t old = b.Stack("old"), kept = b.Stack("kept"), freer = b.Stack("freer"), temp = b.Stack("temp");
  // At the dump: "old" (allocated before the ring, never freed) and "kept" (the ring's).
  SnapshotSegment seg;
  seg.total_size = 1 << 20;
  seg.blocks.push_back(SnapshotBlock{0, 512, 500, BlockState::kActiveAllocated, old});
  seg.blocks.push_back(SnapshotBlock{512, 1024, 1000, BlockState::kActiveAllocated, kept});
  b.s.segments.push_back(seg);
  b.Event(SnapshotAction::kAlloc, 512, 1000, kept);
  b.Event(SnapshotAction::kAlloc, 4096, 3000, temp);    // the peak: 500 + 200 + 1000 + 3000
  b.Event(SnapshotAction::kFreeRequested, 4096, 3000);  // no free yet
  b.Event(SnapshotAction::kFreeCompleted, 4096, 3000);
  b.Event(SnapshotAction::kFreeCompleted, 8192, 200, freer);  // allocated before the ring
  const std::vector<DevicePeak> peaks = DevicePeaks(b.s);
  ASSERT_EQ(peaks.size(), 1u);
  EXPECT_EQ(peaks[0].dump_bytes, 1500);  // as asked for: the ring's unit
  EXPECT_EQ(peaks[0].before_bytes, 700);
  EXPECT_EQ(peaks[0].peak_bytes, 4700);
  EXPECT_EQ(peaks[0].peak_entry, 1);  // the alloc of "temp"; free_requested after it frees nothing
  EXPECT_TRUE(peaks[0].consistent);
  const Profile p = SnapshotProfile(b.s, DevicePeaks(b.s), SnapshotProfileOptions{});
  EXPECT_EQ(ValidateProfile(p), "");
  const std::map<std::string, int64_t> want = {
      {"old x.py:1", 500},
      {"kept x.py:1", 1000},
      {"temp x.py:1", 3000},
      {"freer x.py:1;[allocated before the recorded window; stack of its free]", 200}};
  EXPECT_EQ(Inuse(p), want);
}

TEST(SnapshotProfile, ARingThatFreesWhatWasNeverThereDisagrees) {
  Snapshot b;
  b.Event(SnapshotAction::kAlloc, 0, 100);
  b.Event(SnapshotAction::kFreeCompleted, 0, 100);
  b.Event(SnapshotAction::kFreeCompleted, 0, 100);  // nothing at the dump: the level goes below 0
  const std::vector<DevicePeak> peaks = DevicePeaks(b.s);
  ASSERT_EQ(peaks.size(), 1u);
  EXPECT_FALSE(peaks[0].consistent);
  const Profile p = SnapshotProfile(b.s, DevicePeaks(b.s), SnapshotProfileOptions{});
  bool said = false;
  for (const std::string& c : p.comments) said |= c.find("disagree") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace torch2pprof
