// Encoding checked by decoding with protobuf; output files written atomically.
#include "torch2pprof/pprof_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

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
  p.frames = {
      {"main", "main", "", 0}, {"f x.py:3", "x.py(3): f", "x.py", 3}, {"bad \xff name", "bad \xff name", "", 0}};
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

TEST(PprofWriter, SameProfileSameBytes) { EXPECT_EQ(Gzip(EncodeProfile(Small())), Gzip(EncodeProfile(Small()))); }

TEST(PprofWriter, WritesAtomicallyAndLeavesNoTemporaryFile) {
  TempDir dir;
  std::string out = dir.path() + "/out.pb.gz";
  WriteOutputFile(out, "new bytes");
  EXPECT_EQ(ReadFile(out), "new bytes");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files.push_back(e.path().filename());
  EXPECT_EQ(files, std::vector<std::string>{"out.pb.gz"});
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRUSR, 0u);
}

TEST(PprofWriter, RefusesToOverwriteTheInput) {
  TempDir dir;
  std::string in = dir.Write("trace.json", "[]");
  try {
    WriteOutputFile(dir.path() + "/./trace.json", "x", in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kOutput);
    EXPECT_EQ(e.kind(), Error::Kind::kOutput);
  }
  EXPECT_EQ(ReadFile(in), "[]");
}

TEST(PprofWriter, UnwritablePlacesAreOutputErrorsAndKeepOldFiles) {
  TempDir dir;
  std::string old = dir.Write("old.pb.gz", "old");
  EXPECT_THROW(WriteOutputFile(dir.path() + "/no/such/dir/out.pb.gz", "x"), Error);
  EXPECT_THROW(WriteOutputFile(dir.path(), "x"), Error);  // a directory
  if (geteuid() != 0) {                                   // root writes anywhere
    chmod(dir.path().c_str(), 0500);
    EXPECT_THROW(WriteOutputFile(old, "new"), Error);
    chmod(dir.path().c_str(), 0700);
  }
  EXPECT_EQ(ReadFile(old), "old");
}

}  // namespace
}  // namespace torch2pprof
