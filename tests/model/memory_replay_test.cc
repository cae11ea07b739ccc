// The replay of a snapshot's ring: what is live at any moment, by the three ways a
// block is live, and the frame rule the profile and the analysis share.
#include "model/memory_replay.h"

#include <gtest/gtest.h>

#include "model/frame_names.h"

namespace torch2pprof {
namespace {

SnapshotEvent Event(SnapshotAction a, int64_t addr, int64_t size, uint32_t stack = 0) {
  SnapshotEvent e;
  e.action = a, e.addr = addr, e.size = size, e.stack = stack;
  return e;
}

TEST(MemoryReplay, LiveAfterEachEntry) {
  MemorySnapshot s;
  SnapshotSegment seg;
  seg.blocks.push_back(SnapshotBlock{0, 512, 500, BlockState::kActiveAllocated, 1});      // before the ring
  seg.blocks.push_back(SnapshotBlock{512, 512, 100, BlockState::kActivePendingFree, 2});  // the ring's
  s.segments.push_back(seg);
  s.traces.push_back({Event(SnapshotAction::kAlloc, 512, 100, 2), Event(SnapshotAction::kAlloc, 4096, 30, 3),
                      Event(SnapshotAction::kFreeCompleted, 4096, 30, 3),
                      Event(SnapshotAction::kFreeCompleted, 9999, 7, 4)});  // allocated before the ring
  auto bytes = [&](int64_t entry) {
    int64_t sum = 0;
    for (const LiveBlock& b : LiveAfter(s, 0, {&s.segments[0]}, entry)) sum += b.bytes;
    return sum;
  };
  EXPECT_EQ(bytes(-1), 500 + 7);
  EXPECT_EQ(bytes(0), 500 + 7 + 100);
  EXPECT_EQ(bytes(1), 500 + 7 + 100 + 30);
  EXPECT_EQ(bytes(2), 500 + 7 + 100);
  EXPECT_EQ(bytes(3), 500 + 100);  // the dump
  const std::vector<LiveBlock> before = LiveAfter(s, 0, {&s.segments[0]}, -1);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].kind, LiveBlock::kFreedLater);
  EXPECT_EQ(before[0].stack, 4u);  // the free's
  EXPECT_EQ(before[1].kind, LiveBlock::kStillActive);
  const std::vector<DevicePeak> peaks = DevicePeaks(s);
  ASSERT_EQ(peaks.size(), 1u);
  EXPECT_EQ(peaks[0].peak_bytes, bytes(1));
  EXPECT_EQ(peaks[0].peak_entry, 1);
}

TEST(MemoryReplay, HidesTheInterpreterAndTheAllocator) {
  // _memory_viz's own rules.
  EXPECT_TRUE(IsSnapshotPlumbing("torch::unwind::unwind()", "??", 0));
  EXPECT_TRUE(IsSnapshotPlumbing("_PyEval_EvalFrameDefault", "??", 0));
  EXPECT_TRUE(IsSnapshotPlumbing("f", "aten/src/ATen/core/boxing/impl.h", 0));
  // More than _memory_viz hides.
  EXPECT_TRUE(
      IsSnapshotPlumbing("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long)",
                         "CUDACachingAllocator.cpp", 0));
  EXPECT_TRUE(IsSnapshotPlumbing("wrap_kernel_functor_unboxed_", "RegisterCUDA_0.cpp", 0));
  EXPECT_TRUE(IsSnapshotPlumbing("PyMethod_New", "??", 0));
  EXPECT_TRUE(IsSnapshotPlumbing("__libc_init_first", "??", 0));
  EXPECT_TRUE(IsSnapshotPlumbing("at::detail::empty_strided_generic(c10::ArrayRef<long>)", "??", 0));
  // Kept: the operator that asked, and Python frames whatever their name.
  EXPECT_FALSE(IsSnapshotPlumbing("at::meta::structured_bmm::meta(at::Tensor const&, at::Tensor const&)", "??", 0));
  EXPECT_FALSE(IsSnapshotPlumbing("PyTorchModule", "model.py", 12));
  EXPECT_FALSE(IsSnapshotPlumbing("forward", "model.py", 39));
  // The interpreter's C frames, with the lines an unwinder with debug information gives
  // them (cs336__forward_bf16_ctx128's stacks).
  EXPECT_TRUE(IsSnapshotPlumbing("cfunction_call", "/usr/local/src/conda/python-3.12.3/Objects/methodobject.c", 537));
  EXPECT_TRUE(IsSnapshotPlumbing("_PyEval_EvalFrameDefault",
                                 "/croot/python-split_1715024085344/work/build-static/Python/bytecodes.c", 3382));
  EXPECT_TRUE(IsSnapshotPlumbing("_PyObject_VectorcallTstate",
                                 "/usr/local/src/conda/python-3.12.3/Include/internal/pycore_call.h", 92));
  EXPECT_TRUE(IsSnapshotPlumbing("PyObject_Vectorcall", "??", 0));
  EXPECT_FALSE(IsSnapshotPlumbing("main", "/src/app/Objects.c", 3));  // no CPython directory
}

// The site is the code: the innermost Python frame (never the interpreter's C frames,
// which have lines too), else the backward node (AccumulateGrad on the engine's thread),
// else the operator.
TEST(MemoryReplay, SitesAreCode) {
  MemorySnapshot s;
  auto frame = [&](const char* name, const char* file, int64_t line) {
    s.frames.push_back(SnapshotFrame{s.strings.Intern(name), s.strings.Intern(file), line});
    return static_cast<uint32_t>(s.frames.size() - 1);
  };
  const uint32_t alloc =
      frame("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**)", "", 0);
  const uint32_t op = frame("at::_ops::empty_strided::call(c10::ArrayRef<c10::SymInt>)", "??", 0);
  const uint32_t cfunction = frame("cfunction_call", "/usr/src/python-3.12.3/Objects/methodobject.c", 537);
  const uint32_t einsum = frame("einsum", "/venv/lib/python3.12/site-packages/torch/functional.py", 407);
  const uint32_t grad = frame("torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)", "??", 0);
  const uint32_t mm = frame("torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)", "??", 0);
  const uint32_t node = frame("torch::autograd::Node::operator()(std::vector<at::Tensor>&&)", "", 0);
  s.stacks = {{}, {alloc, op, cfunction, einsum}, {alloc, op, grad, node}, {alloc, op, mm, node}, {alloc, op}, {alloc}};
  SnapshotNames names(s);
  EXPECT_EQ(names.StackSite(1), "einsum torch/functional.py:407");
  EXPECT_EQ(names.StackSite(2), "[backward] AccumulateGrad");
  EXPECT_EQ(names.StackSite(3), "[backward] MmBackward0");
  EXPECT_EQ(names.StackSite(4), "at::_ops::empty_strided::call");
  EXPECT_EQ(names.StackSite(5), "[no stack recorded]");
  EXPECT_EQ(names.StackSite(0), "[no stack recorded]");
}

// Frames that share one long name and one long file name (the pickle's memo makes that
// cheap in the input): each frame's name holds a bounded part of them.
TEST(SnapshotNames, LongSharedNamesAreHeldCutOncePerFrame) {
  MemorySnapshot s;
  const std::string file = std::string(1 << 20, 'd') + "/train.py", fn(1 << 20, 'f');
  for (int line = 1; line <= 3; ++line)
    s.frames.push_back(SnapshotFrame{s.strings.Intern(fn), s.strings.Intern(file), line});
  s.stacks = {{0}, {1}, {2}};
  SnapshotNames names(s);
  for (uint32_t f = 0; f < 3; ++f) {
    const std::string& n = names.FrameName(f);
    EXPECT_LE(n.size(), SnapshotNames::kFrameNameBytes + kNamePathBytes + 32);
    EXPECT_EQ(n.substr(n.size() - 11), " train.py:" + std::to_string(f + 1)) << n.substr(n.size() - 20);
    EXPECT_EQ(&names.StackSite(f), &n);  // the site is the frame's name, not a copy
  }
}

}  // namespace
}  // namespace torch2pprof
