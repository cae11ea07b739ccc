// Encoding checked by decoding with protobuf; output files written atomically.
#include "torch2pprof/output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

#include "proto/profile.pb.h"
#include "test_util.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

using testing::DecodeProfile;
using testing::ReadFile;
using testing::TempDir;

Profile Small() {
  Profile p;
  p.sample_types = {{"calls", "count"}, {"wall", "nanoseconds"}};
  p.default_sample_type = "wall";
  p.period_type = {"wall", "nanoseconds"};
  p.period = 1;
  p.frames = {{"main", "main", "main", "", 0},
              {"f x.py:3", "f", "x.py(3): f", "x.py", 3},
              {"bad \xff name", "bad \xff name", "bad \xff name", "", 0}};
  p.tree = {{0, 0}, {0, 0}, {1, 1}, {2, 2}};
  p.label_sets = {{{"pid", "1", 0, false}, {"step", "", 5, true}}};
  p.samples = {{1, 0, {1, 10}}, {2, 0, {2, 20}}, {3, 0, {1, 5}}};
  p.duration_nanos = 99;
  p.comments = {"hello"};
  return p;
}

TEST(PprofWriter, RoundTripThroughProtobuf) {
  auto d = DecodeProfile(Gzip(EncodeProfile(Small())));
  EXPECT_EQ(d.problem, "");
  EXPECT_EQ(d.default_sample_type, "wall");
  EXPECT_EQ(d.stacks.at("pid=1,step=5|main"), (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(d.stacks.at("pid=1,step=5|main;x.py(3): f"), (std::vector<int64_t>{2, 20}));
  // Invalid UTF-8 is replaced so that protobuf readers accept the profile.
  EXPECT_EQ(d.stacks.at("pid=1,step=5|main;x.py(3): f;bad \xEF\xBF\xBD name"), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(d.files.at("x.py(3): f"), std::make_pair(std::string("x.py"), int64_t{3}));
  EXPECT_EQ(d.comments, std::vector<std::string>{"hello"});
  EXPECT_EQ(d.duration_nanos, 99);
}

// The wire format is written by hand: libprotobuf reads back every field, the extremes
// of int64 (ten-byte varints), zeros that proto3 leaves out, and what pprof needs of
// numeric labels (a unit, so that a value of 0 is kept).
TEST(PprofWriter, EveryFieldAsLibprotobufReadsIt) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  Profile p = Small();
  p.samples[0].values = {kMin, kMax};
  p.samples[1].values = {0, -1};
  p.label_sets.push_back({{"rank", "", 0, true}, {"bytes", "", -300, true}});
  p.samples[2].labels = 1;
  p.time_nanos = 1'700'000'000'000'000'000;
  p.source_file = "trace.json";
  perftools::profiles::Profile pb;
  ASSERT_TRUE(pb.ParseFromString(EncodeProfile(p)));
  auto str = [&](int64_t id) { return pb.string_table(static_cast<int>(id)); };
  EXPECT_EQ(str(0), "");
  ASSERT_EQ(pb.sample_type_size(), 2);
  EXPECT_EQ(str(pb.sample_type(1).type()), "wall");
  EXPECT_EQ(str(pb.sample_type(1).unit()), "nanoseconds");
  ASSERT_EQ(pb.sample_size(), 3);
  EXPECT_EQ(std::vector<int64_t>(pb.sample(0).value().begin(), pb.sample(0).value().end()),
            (std::vector<int64_t>{kMin, kMax}));
  EXPECT_EQ(std::vector<int64_t>(pb.sample(1).value().begin(), pb.sample(1).value().end()),
            (std::vector<int64_t>{0, -1}));
  // Leaf first: node 2 (frame 1, location 2), then its parent node 1 (frame 0).
  EXPECT_EQ(std::vector<uint64_t>(pb.sample(1).location_id().begin(), pb.sample(1).location_id().end()),
            (std::vector<uint64_t>{2, 1}));
  ASSERT_EQ(pb.sample(0).label_size(), 2);
  EXPECT_EQ(str(pb.sample(0).label(0).key()), "pid");
  EXPECT_EQ(str(pb.sample(0).label(0).str()), "1");
  EXPECT_EQ(pb.sample(0).label(0).num_unit(), 0);
  EXPECT_EQ(str(pb.sample(0).label(1).key()), "step");
  EXPECT_EQ(pb.sample(0).label(1).num(), 5);
  ASSERT_EQ(pb.sample(2).label_size(), 2);
  EXPECT_EQ(pb.sample(2).label(0).num(), 0);
  EXPECT_EQ(str(pb.sample(2).label(0).num_unit()), "rank");
  EXPECT_EQ(pb.sample(2).label(1).num(), -300);
  ASSERT_EQ(pb.mapping_size(), 1);
  EXPECT_EQ(pb.mapping(0).id(), 1u);
  EXPECT_EQ(str(pb.mapping(0).filename()), "trace.json");
  EXPECT_TRUE(pb.mapping(0).has_functions() && pb.mapping(0).has_filenames() && pb.mapping(0).has_line_numbers());
  ASSERT_EQ(pb.location_size(), 3);
  ASSERT_EQ(pb.function_size(), 3);
  for (int i = 0; i < 3; ++i) {
    const Frame& f = p.frames[static_cast<size_t>(i)];
    EXPECT_EQ(pb.location(i).id(), static_cast<uint64_t>(i + 1));
    EXPECT_EQ(pb.location(i).mapping_id(), 1u);
    ASSERT_EQ(pb.location(i).line_size(), 1);
    EXPECT_EQ(pb.location(i).line(0).function_id(), static_cast<uint64_t>(i + 1));
    EXPECT_EQ(pb.location(i).line(0).line(), f.line);
    EXPECT_EQ(pb.function(i).id(), static_cast<uint64_t>(i + 1));
    EXPECT_EQ(str(pb.function(i).system_name()), i == 2 ? "bad \xEF\xBF\xBD name" : f.system_name);
    EXPECT_EQ(str(pb.function(i).filename()), f.filename);
    EXPECT_EQ(pb.function(i).start_line(), f.line);
  }
  EXPECT_EQ(pb.time_nanos(), 1'700'000'000'000'000'000);
  EXPECT_EQ(pb.duration_nanos(), 99);
  EXPECT_EQ(str(pb.period_type().type()), "wall");
  EXPECT_EQ(pb.period(), 1);
  ASSERT_EQ(pb.comment_size(), 1);
  EXPECT_EQ(str(pb.comment(0)), "hello");
  EXPECT_EQ(str(pb.default_sample_type()), "wall");
  // Serialized again by libprotobuf, the message is the same bytes: field order, packing
  // and the zeros left out are proto3's.
  std::string again;
  ASSERT_TRUE(pb.SerializeToString(&again));
  EXPECT_TRUE(again == EncodeProfile(p));
}

TEST(PprofWriter, ValidateCatchesBrokenProfiles) {
  Profile p = Small();
  EXPECT_EQ(ValidateProfile(p), "");
  p.samples[0].values.push_back(1);
  EXPECT_NE(ValidateProfile(p), "");
  p = Small();
  p.tree[1].parent = 3;
  EXPECT_NE(ValidateProfile(p), "");
  p = Small();
  p.default_sample_type = "cpu";
  EXPECT_NE(ValidateProfile(p), "");
  p = Small();
  p.samples[0].labels = 9;
  EXPECT_NE(ValidateProfile(p), "");
  EXPECT_THROW(EncodeProfile(p), std::logic_error);
}

// zlib's own gzip reader: the whole input must be one member, its one stream ending
// exactly at the input's end.
std::string Gunzip(const std::string& gz) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 31), Z_OK);
  std::string out;
  char buf[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  EXPECT_EQ(zs.avail_in, 0u) << "bytes after the first member";
  inflateEnd(&zs);
  return out;
}

TEST(PprofWriter, GzipInBlocksIsOneStreamThatZlibReads) {
  // Compressible text like a profile's, in sizes at and around the blocks' (128 KiB).
  std::mt19937 rng(7);
  std::string text;
  while (text.size() < (size_t{1} << 20) + 77) {
    text += "frame_" + std::to_string(rng() % 5000) + "(" + std::to_string(rng() % 97) + ") ";
  }
  constexpr size_t kBlock = size_t{128} << 10;
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{1000}, kBlock - 1, kBlock, kBlock + 1, 3 * kBlock + 77, text.size()}) {
    const std::string data = text.substr(0, size);
    const std::string one = Gzip(data);
    ASSERT_EQ(Gunzip(one), data) << size;
    // Blocks compressed apart lose little against one stream (zlib level 1 over the whole).
    uLongf bound = compressBound(static_cast<uLong>(size));
    std::string whole(bound, '\0');
    ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(whole.data()), &bound, reinterpret_cast<const Bytef*>(data.data()),
                        static_cast<uLong>(size), 1),
              Z_OK);
    EXPECT_LE(one.size(), bound + bound / 50 + 64) << size;
  }
}

}  // namespace
}  // namespace torch2pprof
