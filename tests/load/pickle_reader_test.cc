// The plain-data pickle reader on pickles Python wrote (protocols 2 to 5, the bytes of
// pickle.dumps pasted in hex) and on hostile ones: every forbidden opcode refused at its
// offset, nothing executed.
#include "load/pickle_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "load/byte_source.h"
#include "test_util.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

using testing::Unhex;

PickleData Read(const std::string& bytes) {
  ByteSource source(bytes, "snap.pickle");
  return ReadPickle(source);
}

std::string ErrorOf(const std::string& bytes) {
  try {
    Read(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// pickle.dumps(obj, protocol=p) of
//   frame = {'filename': 'train.py', 'line': 12, 'name': 'forward'}
//   {'segments': [{'device': 0, 'address': 139872000000000, 'total_size': 2097152,
//     'blocks': [{'size': 512, 'requested_size': 500, 'state': 'active_allocated',
//                 'frames': [frame, frame]}]}],
//    'device_traces': [[{'action': 'alloc', 'addr': 139872000000000, 'size': 512,
//                        'frames': [frame], 'time_us': 5}]],
//    'neg': -300, 'big': 2**62, 'f': 1.5, 't': (1, None, True, False), 'empty': ()}
const char* kProtocol2 =
    "80027d71002858080000007365676d656e747371015d71027d710328580600000064657669636571044b005807000000616464726573737105"
    "8a0600c0df7c367f580a000000746f74616c5f73697a6571064a000020005806000000626c6f636b7371075d71087d710928580400000073"
    "697a65710a4d0002580e0000007265717565737465645f73697a65710b4df40158050000007374617465710c58100000006163746976655f"
    "616c6c6f6361746564710d58060000006672616d6573710e5d710f287d711028580800000066696c656e616d6571115808000000747261696e"
    "2e7079711258040000006c696e6571134b0c58040000006e616d6571145807000000666f727761726471157568106575617561580d00000064"
    "65766963655f74726163657371165d71175d71187d7119285806000000616374696f6e711a5805000000616c6c6f63711b5804000000616464"
    "72711c8a0600c0df7c367f680a4d0002680e5d711d681061580700000074696d655f7573711e4b0575616158030000006e6567711f4ad4feff"
    "ff580300000062696771208a0800000000000000405801000000667121473ff80000000000005801000000747122284b014e88897471235805"
    "00"
    "0000656d707479712429752e";
const char* kProtocol5 =
    "80059561010000000000007d94288c087365676d656e7473945d947d94288c06646576696365944b008c0761646472657373948a0600c0df7c"
    "367f8c0a746f74616c5f73697a65944a000020008c06626c6f636b73945d947d94288c0473697a65944d00028c0e72657175657374656"
    "45f73697a65944df4018c057374617465948c106163746976655f616c6c6f6361746564948c066672616d6573945d94287d94288c0866696c"
    "656e616d65948c08747261696e2e7079948c046c696e65944b0c8c046e616d65948c07666f72776172649475681065756175618c0d646576"
    "6963655f747261636573945d945d947d94288c06616374696f6e948c05616c6c6f63948c0461646472948a0600c0df7c367f680a4d000268"
    "0e5d946810618c0774696d655f7573944b057561618c036e6567944ad4feffff8c03626967948a0800000000000000408c016694473ff8000"
    "0000000008c017494284b014e888974948c05656d7074799429752e";

void CheckSnapshotLike(const PickleData& d) {
  using K = PickleData::Kind;
  const auto root = d.root();
  ASSERT_EQ(d.kind(root), K::kDict);
  const auto segment = d.Items(*d.Get(root, "segments"))[0];
  EXPECT_EQ(d.Int(*d.Get(segment, "address")), 139872000000000);
  EXPECT_EQ(d.Int(*d.Get(segment, "total_size")), 2097152);
  const auto block = d.Items(*d.Get(segment, "blocks"))[0];
  EXPECT_EQ(d.Int(*d.Get(block, "requested_size")), 500);
  EXPECT_EQ(d.Str(*d.Get(block, "state")), "active_allocated");
  // The frame repeated on the stacks is one node: memo references are shared.
  const auto& frames = d.Items(*d.Get(block, "frames"));
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], frames[1]);
  EXPECT_EQ(d.Str(*d.Get(frames[0], "filename")), "train.py");
  EXPECT_EQ(d.Int(*d.Get(frames[0], "line")), 12);
  const auto alloc = d.Items(d.Items(*d.Get(root, "device_traces"))[0])[0];
  EXPECT_EQ(d.Items(*d.Get(alloc, "frames"))[0], frames[0]);
  EXPECT_EQ(d.Int(*d.Get(root, "neg")), -300);
  EXPECT_EQ(d.Int(*d.Get(root, "big")), int64_t{1} << 62);
  EXPECT_DOUBLE_EQ(d.Float(*d.Get(root, "f")), 1.5);
  const auto& t = d.Items(*d.Get(root, "t"));
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(d.kind(t[1]), K::kNone);
  EXPECT_EQ(d.kind(t[2]), K::kBool);
  EXPECT_EQ(d.Int(t[2]), 1);
  EXPECT_EQ(d.Int(t[3]), 0);
  EXPECT_EQ(d.kind(*d.Get(root, "empty")), K::kTuple);
  EXPECT_FALSE(d.Get(root, "missing").has_value());
}

TEST(PickleReader, ReadsWhatPythonWroteInEveryProtocol) {
  CheckSnapshotLike(Read(Unhex(kProtocol2)));
  CheckSnapshotLike(Read(Unhex(kProtocol5)));
}

TEST(PickleReader, RefusesEveryObjectBuildingOpcodeAtItsOffset) {
  // PROTO 2, then the opcode at byte 2.
  const std::pair<uint8_t, const char*> forbidden[] = {
      {'c', "GLOBAL"}, {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"},  {'b', "BUILD"},
      {'i', "INST"},   {'o', "OBJ"},           {0x81, "NEWOBJ"}, {0x92, "NEWOBJ_EX"},
      {'P', "PERSID"}, {'Q', "BINPERSID"},     {0x82, "EXT1"},   {0x97, "NEXT_BUFFER"}};
  for (const auto& [op, name] : forbidden) {
    const std::string e = ErrorOf(std::string("\x80\x02", 2) + static_cast<char>(op) + "os\nsystem\n");
    EXPECT_NE(e.find("snap.pickle"), std::string::npos) << e;
    EXPECT_NE(e.find("byte 2"), std::string::npos) << e;
    EXPECT_NE(e.find(std::string("opcode ") + name), std::string::npos) << e;
    EXPECT_NE(e.find("nothing in a file is executed"), std::string::npos) << e;
  }
  // Protocol 0's text opcodes are no part of a snapshot either.
  EXPECT_NE(ErrorOf("I12\n.").find("opcode 0x49"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string("\x80\x01", 2)).find("protocol 0 or 1"), std::string::npos);
}

TEST(PickleReader, BrokenStreamsAreOneLineErrors) {
  const std::string good = Unhex(kProtocol2);
  // Cut anywhere: an error, never a crash.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_NE(ErrorOf(good.substr(0, n)), "(no error)") << n;
  }
  EXPECT_NE(ErrorOf(good.substr(0, 40)).find("truncated"), std::string::npos);
  // A memo reference to nothing, an APPEND to a dict, a STOP with two values.
  EXPECT_NE(ErrorOf(std::string("\x80\x02h\x07.", 5)).find("memo reference"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string("\x80\x02}K\x01"
                                "a.",
                                7))
                .find("APPEND to no list"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string("\x80\x02K\x01K\x02.", 7)).find("STOP with 2 values"), std::string::npos);
  // A memo index past the values read (LONG_BINPUT 2^32-1 after one value): refused, not
  // a table of 2^32 entries.
  EXPECT_NE(ErrorOf(std::string("\x80\x02K\x01r\xff\xff\xff\xff.", 10)).find("memo index beyond"), std::string::npos);
  // Integers: 2**63 does not fit; -2**63 does; a length beyond the file fails at its end.
  EXPECT_NE(ErrorOf(std::string("\x80\x02\x8a\x09\0\0\0\0\0\0\0\x80\0.", 14)).find("beyond 64 bits"),
            std::string::npos);
  PickleData min = Read(std::string("\x80\x02\x8a\x08\0\0\0\0\0\0\0\x80.", 13));
  EXPECT_EQ(min.Int(min.root()), INT64_MIN);
  EXPECT_NE(ErrorOf(std::string("\x80\x02X\x00\x00\x10\x00"
                                "abc",
                                10))
                .find("truncated"),
            std::string::npos);
  // A string longer than any a snapshot holds is refused at its length, not read.
  EXPECT_NE(ErrorOf(std::string("\x80\x02X\xff\xff\xff\x7f"
                                "abc",
                                10))
                .find("longer than 67108864"),
            std::string::npos);
  // MARKs deeper than Python nests, values piled higher than its batches: refused.
  EXPECT_NE(ErrorOf("\x80\x02" + std::string(70000, '(')).find("MARKs open at once"), std::string::npos);
}

// Takes what a snapshot holds millions of, as the snapshot reader does: ring entries
// (dicts with "action"), frames (dicts with "filename"), stacks (lists of taken frames).
class TakeEntriesFramesStacks : public PickleSink {
 public:
  std::optional<uint32_t> Take(const PickleData& d, PickleData::Node v) override {
    const std::vector<PickleData::Node>& items = d.Items(v);
    if (d.kind(v) == PickleData::Kind::kDict) {
      for (size_t i = 0; i < items.size(); i += 2) {
        if (d.Str(items[i]) == "action") return entries++;
        if (d.Str(items[i]) == "filename") return kFrame | frames++;
      }
      return std::nullopt;
    }
    if (items.empty()) return std::nullopt;
    for (PickleData::Node f : items) {
      if (d.kind(f) != PickleData::Kind::kEntry || !(d.Entry(f) & kFrame)) return std::nullopt;
    }
    return kStack | stacks++;
  }
  void Forget(PickleData::Node) override {}
  static constexpr uint32_t kFrame = 1u << 29, kStack = 1u << 28;
  uint32_t entries = 0, frames = 0, stacks = 0;
};

TEST(PickleReader, StreamedValuesAreDroppedAsTheSinkTakesThem) {
  // A real snapshot (torch 2.x, stacks="all"): each ring entry is written with a fresh
  // frames list and a fresh compile_context string, which the memo stores; a later alloc
  // or free names the list again. Read whole it is a value per field; streamed, nothing of
  // the 19,136 entries stays a value: what is held is the segments' blocks (918 here).
  const std::string path = std::string(TESTDATA_DIR) + "/snapshots/cs336__medium_ctx128_training_step.pickle.gz";
  ByteSource whole_source(path);
  const PickleData whole = ReadPickle(whole_source);
  TakeEntriesFramesStacks sink;
  ByteSource streamed_source(path);
  const PickleData streamed = ReadPickle(streamed_source, &sink);
  EXPECT_EQ(sink.entries, 19136u);
  EXPECT_GT(whole.size(), 19136u * 5);
  EXPECT_LT(streamed.size(), 918u * 12);
  // What was made after the rings began is the allocator settings that follow them.
  const PickleData::Node rings_node = *streamed.Get(streamed.root(), "device_traces");
  EXPECT_LT(streamed.size() - rings_node, 100u);
  // And every entry of the ring names an entry the sink took, in order.
  const std::vector<PickleData::Node>& rings = streamed.Items(*streamed.Get(streamed.root(), "device_traces"));
  ASSERT_EQ(rings.size(), 1u);
  const std::vector<PickleData::Node>& ring = streamed.Items(rings[0]);
  ASSERT_EQ(ring.size(), 19136u);
  for (uint32_t i = 0; i < ring.size(); ++i) ASSERT_EQ(streamed.Entry(ring[i]), i);
}

}  // namespace
}  // namespace torch2pprof
