// The snapshot reader both ways: from the pickle's values, and as the pickle streams in
// with the rings' entries taken on the way (what convert and analyze do). The two agree
// on a real snapshot, and the streaming one refuses what it cannot take.
#include "load/snapshot.h"

#include <gtest/gtest.h>

#include <string>

#include "load/byte_source.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

TEST(Snapshot, StreamedAsReadFromValues) {
  const std::string path = std::string(TESTDATA_DIR) + "/snapshots/oom_train.pickle.gz";
  ByteSource values_source(path);
  const PickleData values = ReadPickle(values_source);
  const MemorySnapshot a = ReadSnapshot(values, path);
  ByteSource streamed_source(path);
  const MemorySnapshot b = ReadSnapshot(streamed_source, path);
  ASSERT_EQ(a.traces.size(), b.traces.size());
  ASSERT_EQ(a.traces[0].size(), 1813u);
  for (size_t t = 0; t < a.traces.size(); ++t) {
    ASSERT_EQ(a.traces[t].size(), b.traces[t].size());
    for (size_t i = 0; i < a.traces[t].size(); ++i) {
      const SnapshotEvent &x = a.traces[t][i], &y = b.traces[t][i];
      EXPECT_EQ(x.action, y.action);
      EXPECT_EQ(x.addr, y.addr);
      EXPECT_EQ(x.size, y.size);
      EXPECT_EQ(x.time_us, y.time_us);
      EXPECT_EQ(x.device_free, y.device_free);
      // Stacks are numbered in the order met, which differs: compare their frames' text.
      ASSERT_EQ(a.stacks[x.stack].size(), b.stacks[y.stack].size()) << i;
      for (size_t f = 0; f < a.stacks[x.stack].size(); ++f) {
        EXPECT_EQ(a.strings.Get(a.frames[a.stacks[x.stack][f]].name),
                  b.strings.Get(b.frames[b.stacks[y.stack][f]].name));
      }
    }
  }
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (size_t i = 0; i < a.segments.size(); ++i) EXPECT_EQ(a.segments[i].blocks.size(), b.segments[i].blocks.size());
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
  // {'segments': [], 'device_traces': [[d]], 'again': d}: named again after it was taken,
  // which torch never writes: refused when streamed (the values' reading has it).
  const std::string again = Unhex(
      "80027d71002858080000007365676d656e747371015d7102580d0000006465766963655f74726163657371035d71045d71057d71"
      "06285806000000616374696f6e71075805000000616c6c6f63710858040000006164647271094b01580400000073697a65710a4b02"
      "7561615805000000616761696e710b6806752e");
  ByteSource again_streamed(again, "again.pickle");
  try {
    ReadSnapshot(again_streamed, "again.pickle");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already read"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace torch2pprof
