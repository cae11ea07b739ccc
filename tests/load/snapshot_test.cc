// The snapshot reader both ways: from the pickle's values, and as the pickle streams in
// with the rings' entries taken on the way (what convert and analyze do). The two agree
// on a real snapshot, and the streaming one refuses what it cannot take.
#include "load/snapshot.h"

#include <gtest/gtest.h>

#include <string>

#include "load/byte_source.h"
#include "test_util.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

using testing::Unhex;

// The text of a stack, for comparing two reads (they number stacks in different orders).
std::string StackText(const MemorySnapshot& s, uint32_t stack) {
  std::string out;
  for (uint32_t f : s.stacks.at(stack)) {
    const SnapshotFrame& frame = s.frames.at(f);
    out += std::string(s.strings.Get(frame.name)) + "@" + std::string(s.strings.Get(frame.filename)) + ":" +
           std::to_string(frame.line) + ";";
  }
  return out;
}

void ExpectSame(const MemorySnapshot& a, const MemorySnapshot& b) {
  ASSERT_EQ(a.traces.size(), b.traces.size());
  for (size_t t = 0; t < a.traces.size(); ++t) {
    ASSERT_EQ(a.traces[t].size(), b.traces[t].size());
    for (size_t i = 0; i < a.traces[t].size(); ++i) {
      const SnapshotEvent &x = a.traces[t][i], &y = b.traces[t][i];
      EXPECT_EQ(x.action, y.action);
      EXPECT_EQ(x.addr, y.addr);
      EXPECT_EQ(x.size, y.size);
      EXPECT_EQ(x.time_us, y.time_us);
      EXPECT_EQ(DeviceFree(x), DeviceFree(y));
      EXPECT_EQ(a.contexts[x.context].stream, b.contexts[y.context].stream);
      EXPECT_EQ(a.strings.Get(a.contexts[x.context].compile_context),
                b.strings.Get(b.contexts[y.context].compile_context));
      ASSERT_EQ(StackText(a, x.stack), StackText(b, y.stack)) << "entry " << i;
    }
  }
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (size_t i = 0; i < a.segments.size(); ++i) {
    const SnapshotSegment &x = a.segments[i], &y = b.segments[i];
    EXPECT_EQ(x.address, y.address);
    EXPECT_EQ(x.total_size, y.total_size);
    EXPECT_EQ(StackText(a, x.stack), StackText(b, y.stack));
    ASSERT_EQ(x.blocks.size(), y.blocks.size());
    for (size_t k = 0; k < x.blocks.size(); ++k) {
      EXPECT_EQ(x.blocks[k].address, y.blocks[k].address);
      EXPECT_EQ(x.blocks[k].requested_size, y.blocks[k].requested_size);
      EXPECT_EQ(x.blocks[k].state, y.blocks[k].state);
      EXPECT_EQ(StackText(a, x.blocks[k].stack), StackText(b, y.blocks[k].stack));
    }
  }
  EXPECT_EQ(a.annotations.size(), b.annotations.size());
  EXPECT_EQ(a.overflowed, b.overflowed);
}

TEST(Snapshot, StreamedAsReadFromValues) {
  // Every snapshot at hand: real ones (torch shares frames between stacks and a stack
  // between an alloc and its free, so memo references reach taken frames and stacks),
  // hand-made ones with every feature, a legacy one with history.
  for (const std::string& path : {std::string(TESTDATA_DIR) + "/snapshots/oom_train.pickle.gz",
                                  std::string(TESTDATA_DIR) + "/snapshots/cs336__medium_ctx128_training_step.pickle.gz",
                                  std::string(TESTDATA_DIR) + "/snapshots/expandable.pickle.gz",
                                  std::string(TESTDATA_DIR) + "/snapshots/ring_overflow.pickle.gz",
                                  std::string(TESTDATA_DIR) + "/../fuzz/regressions/snapshot_features.pickle",
                                  std::string(TESTDATA_DIR) + "/../fuzz/regressions/snapshot_small.pickle"}) {
    SCOPED_TRACE(path);
    ByteSource values_source(path);
    const MemorySnapshot a = ReadSnapshot(ReadPickle(values_source), path);
    ByteSource streamed_source(path);
    const MemorySnapshot b = ReadSnapshot(streamed_source, path);
    ExpectSame(a, b);
  }
}

TEST(Snapshot, AnEntryNamedTwice) {
  // d = {'action': 'alloc', 'addr': 1, 'size': 2} twice in one ring: the second a memo
  // reference made before the ring's APPENDS, so both are taken: two entries either way.
  const std::string twice = Unhex(
      "80027d71002858080000007365676d656e747371015d7102580d0000006465766963655f74726163657371035d71045d7105287d71"
      "06285806000000616374696f6e71075805000000616c6c6f63710858040000006164647271094b01580400000073697a65710a4b02"
      "7568066561752e");
  ByteSource values_source(twice, "twice.pickle");
  EXPECT_EQ(ReadSnapshot(ReadPickle(values_source), "twice.pickle").traces.at(0).size(), 2u);
  ByteSource streamed(twice, "twice.pickle");
  EXPECT_EQ(ReadSnapshot(streamed, "twice.pickle").traces.at(0).size(), 2u);
  // {'segments': [], 'device_traces': [[d]], 'again': d}: named again after it was taken
  // (torch never writes that): the reference names the entry, read as the values are.
  const std::string again = Unhex(
      "80027d71002858080000007365676d656e747371015d7102580d0000006465766963655f74726163657371035d71045d71057d71"
      "06285806000000616374696f6e71075805000000616c6c6f63710858040000006164647271094b01580400000073697a65710a4b02"
      "7561615805000000616761696e710b6806752e");
  ByteSource again_values(again, "again.pickle");
  EXPECT_EQ(ReadSnapshot(ReadPickle(again_values), "again.pickle").traces.at(0).size(), 1u);
  ByteSource again_streamed(again, "again.pickle");
  const MemorySnapshot streamed_again = ReadSnapshot(again_streamed, "again.pickle");
  ASSERT_EQ(streamed_again.traces.at(0).size(), 1u);
  EXPECT_EQ(streamed_again.traces[0][0].size, 2);
}

// Rings that share entries (legal: the memo names the same dicts from two devices'
// lists): each ring holds them, however they were read.
TEST(Snapshot, RingsThatShareEntries) {
  // e1, e2 = {'action': 'alloc', 'addr': 1, 'size': 2}, {'action': 'free_completed', ...};
  // {'segments': [], 'device_traces': [[e1, e2], [e1, e2]]}, protocol 2.
  const std::string shared = Unhex(
      "80027d71002858080000007365676d656e747371015d7102580d0000006465766963655f74726163657371035d7104285d710528"
      "7d7106285806000000616374696f6e71075805000000616c6c6f63710858040000006164647271094b01580400000073697a6571"
      "0a4b02757d710b286807580e000000667265655f636f6d706c65746564710c68094b01680a4b0275655d710d286806680b656575"
      "2e");
  for (bool streamed : {false, true}) {
    ByteSource source(shared, "shared.pickle");
    const MemorySnapshot s =
        streamed ? ReadSnapshot(source, "shared.pickle") : ReadSnapshot(ReadPickle(source), "shared.pickle");
    ASSERT_EQ(s.traces.size(), 2u) << streamed;
    for (const SnapshotRing& ring : s.traces) {
      ASSERT_EQ(ring.size(), 2u) << streamed;
      EXPECT_EQ(ring[0].action, SnapshotAction::kAlloc);
      EXPECT_EQ(ring[1].action, SnapshotAction::kFreeCompleted);
      EXPECT_EQ(ring[1].size, 2);
    }
  }
}

// A small file that names a segment and a blocks list again and again ("billion laughs"):
// read where the expansion is within the cap, refused with the cap and its option named.
TEST(Snapshot, SharedReferencesCountAsWhatTheyExpandTo) {
  // b = {'address': 0, 'size': 8, 'state': 'active_allocated'}; seg = {'device': 0,
  // 'address': 0, 'total_size': 800, 'blocks': [b] * 100}; {'segments': [seg] * 100,
  // 'device_traces': []}: 578 bytes, 100 segments of 100 blocks.
  const std::string laughs = Unhex(
      "80027d71002858080000007365676d656e747371015d7102287d710328580600000064657669636571044b005807000000616464"
      "7265737371054b00580a000000746f74616c5f73697a6571064d20035806000000626c6f636b7371075d7108287d71092868054b"
      "00580400000073697a65710a4b0858050000007374617465710b58100000006163746976655f616c6c6f6361746564710c756809"
      "68096809680968096809680968096809680968096809680968096809680968096809680968096809680968096809680968096809"
      "68096809680968096809680968096809680968096809680968096809680968096809680968096809680968096809680968096809"
      "68096809680968096809680968096809680968096809680968096809680968096809680968096809680968096809680968096809"
      "68096809680968096809680968096809680968096809680968096809680968096809680968096809657568036803680368036803"
      "68036803680368036803680368036803680368036803680368036803680368036803680368036803680368036803680368036803"
      "68036803680368036803680368036803680368036803680368036803680368036803680368036803680368036803680368036803"
      "68036803680368036803680368036803680368036803680368036803680368036803680368036803680368036803680368036803"
      "680368036803680368036803680368036803680368036803680368036803680365580d0000006465766963655f74726163657371"
      "0d5d710e752e");
  ByteSource values(laughs, "laughs.pickle");
  const PickleData data = ReadPickle(values);
  const MemorySnapshot s = ReadSnapshot(data, "laughs.pickle");
  ASSERT_EQ(s.segments.size(), 100u);
  EXPECT_EQ(s.segments[99].blocks.size(), 100u);
  try {
    ReadSnapshot(data, "laughs.pickle", 10000);  // 100 segments and 10,000 blocks
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 10000 segments, blocks and ring entries"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--max-snapshot-items"), std::string::npos) << e.what();
  }
  ByteSource streamed(laughs, "laughs.pickle");
  EXPECT_EQ(ReadSnapshot(streamed, "laughs.pickle", 10200).segments.size(), 100u);
}

// More rings than torch has devices: refused, not 65,537 rings made.
TEST(Snapshot, MoreDevicesThanTorchNumbers) {
  auto unicode = [](const std::string& t) {
    const uint32_t n = static_cast<uint32_t>(t.size());
    return std::string("X") + static_cast<char>(n & 255) + static_cast<char>(n >> 8 & 255) +
           static_cast<char>(n >> 16 & 255) + static_cast<char>(n >> 24) + t;
  };
  const std::string pickle = std::string("\x80\x02}(") + unicode("segments") + "]" + unicode("device_traces") + "](" +
                             std::string(65537, ']') + "eu.";
  ByteSource source(pickle, "devices.pickle");
  try {
    ReadSnapshot(source, "devices.pickle");
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 65536 devices' rings (it has 65537)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace torch2pprof
