// Reading back the profiles convert writes (convert -o over profiles): what the writer
// wrote comes back and encodes to the same bytes; anything else is refused with its
// offset; and a trace is never taken for a profile, even one that opens with a newline.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "load/input.h"
#include "test_util.h"
#include "torch2pprof/error.h"
#include "torch2pprof/output.h"
#include "torch2pprof/profile.h"
#include "write/output_guard.h"

namespace torch2pprof {
namespace {

Profile Written() {
  Profile p;
  p.sample_types = {{"calls", "count"}, {"wall", "nanoseconds"}, {"gpu", "nanoseconds"}};
  p.default_sample_type = "wall";
  p.period_type = {"wall", "nanoseconds"};
  p.period = 1;
  p.frames = {{"main", "main", "main", "", 0},
              {"f x.py:3", "f", "x.py(3): f", "x.py", 3},
              {"at::native::gemm<float>(int)", "at::native::gemm<float>(int)", "at::native::gemm<float>(int)", "", 0},
              {"bad \xff name", "bad \xff name", "bad \xff name", "", 0}};
  p.tree = {{0, 0}, {0, 0}, {1, 1}, {2, 2}, {1, 3}};
  p.label_sets = {{{"pid", "", 1, true}, {"thread", "main", 0, false}, {"rank", "", 0, true}},
                  {{"pid", "", 1, true}, {"step", "", 5, true}, {"device", "cuda:0", 0, false}},
                  {{"tid", "", 2, true}}};  // used by no sample: written nowhere
  p.samples = {{1, 1, {1, 10, 0}}, {2, 0, {2, 20, -3}}, {3, 1, {1, 5, 7}}, {4, 0, {0, 0, 0}}};
  p.time_nanos = 1'790'857'026'000'000'123;
  p.duration_nanos = 99;
  p.comments = {"torch2pprof 0.1.0 convert t.json (rank 0)", "events: 5"};
  p.source_file = "t.json";
  return p;
}

TEST(ProfileReader, WhatConvertWroteComesBackAndEncodesToTheSameBytes) {
  const std::string bytes = EncodeProfile(Written());
  for (const std::string& stored : {bytes, Gzip(bytes)}) {
    Profile back = DecodeProfile("p.pb.gz", stored);
    EXPECT_EQ(ValidateProfile(back), "");
    EXPECT_EQ(EncodeProfile(back), bytes);
    ASSERT_EQ(back.frames.size(), 4u);
    EXPECT_EQ(back.frames[1].system_name, "x.py(3): f");
    EXPECT_EQ(back.frames[1].filename, "x.py");
    EXPECT_EQ(back.frames[1].line, 3);
    EXPECT_EQ(back.frames[2].name, "at::native::gemm<float>");  // pprof's name; system_name keeps the signature
    EXPECT_EQ(back.frames[2].system_name, "at::native::gemm<float>(int)");
    ASSERT_EQ(back.samples.size(), 4u);
    EXPECT_EQ(back.samples[1].values, (std::vector<int64_t>{2, 20, -3}));
    EXPECT_EQ(back.samples[3].values, (std::vector<int64_t>{0, 0, 0}));
    const std::vector<Label>& labels = back.label_sets[back.samples[1].labels];
    ASSERT_EQ(labels.size(), 3u);
    EXPECT_TRUE(labels[2].numeric);  // rank 0: numeric though 0
    EXPECT_EQ(labels[2].num, 0);
    EXPECT_EQ(labels[1].str, "main");
    EXPECT_EQ(back.time_nanos, 1'790'857'026'000'000'123);
    EXPECT_EQ(back.duration_nanos, 99);
    EXPECT_EQ(back.source_file, "t.json");
    EXPECT_EQ(back.comments, Written().comments);
  }
}

std::string ErrorOf(const std::string& bytes) {
  try {
    DecodeProfile("bad.pb.gz", bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  return "(no error)";
}

TEST(ProfileReader, AnythingElseIsRefusedWithItsOffset) {
  const std::string bytes = EncodeProfile(Written());
  const std::string cut = ErrorOf(bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(cut.find("bad.pb.gz: byte "), std::string::npos) << cut;
  EXPECT_NE(cut.find("not a pprof profile"), std::string::npos) << cut;
  const std::string gz = Gzip(bytes);
  EXPECT_NE(ErrorOf(gz.substr(0, gz.size() - 20)).find("gzip stream is truncated"), std::string::npos);
  std::string corrupt = gz;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0x55);
  EXPECT_NE(ErrorOf(corrupt).find("bad.pb.gz"), std::string::npos);
  Profile foreign = Written();
  foreign.comments = {"written by Go's runtime/pprof"};
  EXPECT_NE(ErrorOf(EncodeProfile(foreign)).find("did not write"), std::string::npos);
  // Field 2 (a sample) as a varint: no message.
  EXPECT_NE(ErrorOf(std::string("\x10\x01", 2)).find("a sample that is no message"), std::string::npos);
  // A sample naming location 9, which is not there.
  Profile dangling = Written();
  std::string b = EncodeProfile(dangling);
  b += std::string("\x12\x08\x0a\x01\x09\x12\x03\x01\x02\x03", 10);
  EXPECT_NE(ErrorOf(b).find("location 9"), std::string::npos);
  // A sample with no stack.
  EXPECT_NE(ErrorOf(EncodeProfile(Written()) + std::string("\x12\x05\x12\x03\x01\x02\x03", 7)).find("no stack"),
            std::string::npos);
  // A length past the end, and a ten-byte-plus number.
  EXPECT_NE(ErrorOf(std::string("\x0a\x7f\x08", 3)).find("runs past the end"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string("\x48\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12)).find("longer than ten"),
            std::string::npos);
}

TEST(ProfileReader, ATraceIsNoProfileEvenWhenItOpensWithANewline) {
  testing::TempDir dir;
  const std::string profile = dir.Write("p.pb.gz", Gzip(EncodeProfile(Written())));
  const std::string raw = dir.Write("p.pb", EncodeProfile(Written()));
  const std::string trace = dir.Write("t.json.gz", Gzip("\n  {\n  \"traceEvents\": []}\n"));
  const std::string plain = dir.Write("t.json", "\n{\"traceEvents\": []}");
  EXPECT_EQ(Input(profile).kind(), InputKind::kProfile);
  EXPECT_EQ(Input(raw).kind(), InputKind::kProfile);
  EXPECT_EQ(Input(trace).kind(), InputKind::kTrace);
  EXPECT_EQ(Input(plain).kind(), InputKind::kTrace);
  // So no output replaces a trace without --force, even one named like a profile.
  EXPECT_TRUE(LooksLikeOutput(profile));
  EXPECT_FALSE(LooksLikeOutput(trace));
  EXPECT_FALSE(LooksLikeOutput(plain));
}

}  // namespace
}  // namespace torch2pprof
