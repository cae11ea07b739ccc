// analyze DIR: what a directory stands for. Summaries stand for their traces where several
// ranks are there (under the traces' names), and where every name carries a profiler cycle
// (what on_trace_ready writes) the last complete cycle is the one read, with a note.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"
#include "torch2pprof/error.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {
namespace {

using testing::TempDir;
using Strings = std::vector<std::string>;

TEST(Directory, SummariesStandForTheirTracesUnderTheTracesNames) {
  TempDir dir;
  for (const char* name : {"rank0.pt.trace.json.gz", "rank0.summary.json", "rank1.pt.trace.json.gz", "notes.txt"}) {
    dir.Write(name, "");
  }
  const std::string p = dir.path() + "/";
  DirectoryInputs in = InputsOfDirectory(dir.path());
  EXPECT_EQ(in.inputs, (Strings{p + "rank0.summary.json", p + "rank1.pt.trace.json.gz"}));
  EXPECT_EQ(in.names, (Strings{p + "rank0.pt.trace.json.gz", ""}));
  EXPECT_TRUE(in.notes.empty());
}

TEST(Directory, OneRankIsReadFromItsTrace) {
  TempDir dir;
  dir.Write("rank0.pt.trace.json", "");
  dir.Write("rank0.summary.json", "");
  DirectoryInputs in = InputsOfDirectory(dir.path() + "/");
  EXPECT_EQ(in.inputs, (Strings{dir.path() + "/rank0.pt.trace.json"}));
  EXPECT_EQ(in.names, (Strings{""}));
}

TEST(Directory, SummariesWithoutTracesAndPlainJson) {
  TempDir dir;
  dir.Write("a.summary.json", "");
  dir.Write("b.summary.json", "");
  dir.Write("c.json", "");  // no *.pt.trace.json here: every *.json is a trace
  DirectoryInputs in = InputsOfDirectory(dir.path());
  const std::string p = dir.path() + "/";
  EXPECT_EQ(in.inputs, (Strings{p + "c.json", p + "a.summary.json", p + "b.summary.json"}));
}

TEST(Directory, TheLastCompleteProfilerCycle) {
  TempDir dir;
  for (const char* name :
       {"rank0.step3.pt.trace.json.gz", "rank0.step3.summary.json", "rank1.step3.pt.trace.json.gz",
        "rank1.step3.summary.json", "rank0.step11.pt.trace.json.gz", "rank0.step11.summary.json",
        "rank1.step11.pt.trace.json.gz", "rank1.step11.summary.json", "rank0.step12.partial.pt.trace.json.gz",
        "rank0.step12.partial.summary.json", "rank1.step12.partial.pt.trace.json.gz", "rank0.step11.pb.gz"}) {
    dir.Write(name, "");
  }
  const std::string p = dir.path() + "/";
  DirectoryInputs in = InputsOfDirectory(dir.path());
  // Step 11, not 3 (by number, not by name) and not the partial 12.
  EXPECT_EQ(in.inputs, (Strings{p + "rank0.step11.summary.json", p + "rank1.step11.summary.json"}));
  EXPECT_EQ(in.names, (Strings{p + "rank0.step11.pt.trace.json.gz", p + "rank1.step11.pt.trace.json.gz"}));
  ASSERT_EQ(in.notes.size(), 1u);
  EXPECT_NE(in.notes[0].find("3 profiler cycles (ending at steps 3, 11, 12); analysing the last complete one, step 11"),
            std::string::npos)
      << in.notes[0];
}

TEST(Directory, APartialCycleWhereThereIsNoOther) {
  TempDir dir;
  dir.Write("pid7.step2.partial.pt.trace.json", "");
  DirectoryInputs in = InputsOfDirectory(dir.path());
  EXPECT_EQ(in.inputs, (Strings{dir.path() + "/pid7.step2.partial.pt.trace.json"}));
  EXPECT_TRUE(in.notes.empty());
}

TEST(Directory, NamesWithoutCyclesKeepEveryFile) {
  TempDir dir;
  dir.Write("rank0.step3.pt.trace.json", "");
  dir.Write("rank1.pt.trace.json", "");  // one name without a cycle: no choice is made
  EXPECT_EQ(InputsOfDirectory(dir.path()).inputs.size(), 2u);
}

TEST(Directory, NothingToReadIsOneError) {
  TempDir dir;
  dir.Write("notes.txt", "");
  EXPECT_THROW(InputsOfDirectory(dir.path()), Error);
  EXPECT_THROW(InputsOfDirectory(dir.path() + "/missing"), Error);
}

}  // namespace
}  // namespace torch2pprof
