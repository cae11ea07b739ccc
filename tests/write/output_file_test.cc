// Writing outputs: atomically, never over an input or a file torch2pprof did not write,
// in place on devices and descriptor links.
#include "torch2pprof/output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "test_util.h"
#include "torch2pprof/error.h"
#include "write/output_guard.h"

namespace torch2pprof {
namespace {

using testing::ReadFile;
using testing::TempDir;

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().filename());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(OutputFile, WritesAtomicallyAndLeavesNoTemporaryFile) {
  TempDir dir;
  std::string out = dir.path() + "/out.pb.gz";
  WriteOutputFile(out, "new bytes");
  EXPECT_EQ(ReadFile(out), "new bytes");
  EXPECT_EQ(Files(dir.path()), std::vector<std::string>{"out.pb.gz"});
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRUSR, 0u);
  EXPECT_EQ(
      st.st_mode & 0777, 0666 & ~[] {
        mode_t m = umask(0);
        umask(m);
        return m;
      }());
}

TEST(OutputFile, RefusesToOverwriteAnInputByAnyName) {
  TempDir dir;
  std::string in = dir.Write("trace.pb.gz", "[]");
  WriteOptions o;
  o.inputs = {in};
  for (const std::string& name : {in, dir.path() + "/./trace.pb.gz"}) {
    try {
      WriteOutputFile(name, "x", o);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kOutput);
    }
  }
  o.force = true;
  EXPECT_THROW(WriteOutputFile(in, "x", o), Error);  // not even with --force
  EXPECT_EQ(ReadFile(in), "[]");
}

TEST(OutputFile, ReplacesOnlyWhatLooksLikeItsOwnOutput) {
  TempDir dir;
  Profile p;
  p.sample_types = {{"wall", "nanoseconds"}};
  p.tree = {{0, 0}};
  std::string profile = dir.Write("a.pb.gz", Gzip(EncodeProfile(p)));
  std::string folded = dir.Write("a.folded", "main;f 12\nmain 3\n");
  std::string pstats = dir.Write("a.prof", std::string("{(\x03\x00\x00\x00", 6));
  std::string empty = dir.Write("e.pb.gz", "");
  for (const std::string& ok : {profile, folded, pstats, empty}) {
    EXPECT_TRUE(LooksLikeOutput(ok)) << ok;
    WriteOutputFile(ok, "replaced");
    EXPECT_EQ(ReadFile(ok), "replaced");
  }
  std::string trace = dir.Write("t.pb.gz", R"({"traceEvents": []})");
  std::string script = dir.Write("run.prof", "#!/bin/sh\necho 1\n");
  for (const std::string& keep : {trace, script}) {
    std::string before = ReadFile(keep);
    EXPECT_FALSE(LooksLikeOutput(keep)) << keep;
    try {
      WriteOutputFile(keep, "x");
      FAIL() << keep;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--force replaces it"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ReadFile(keep), before);
    WriteOptions force;
    force.force = true;
    WriteOutputFile(keep, "x", force);
    EXPECT_EQ(ReadFile(keep), "x");
  }
}

TEST(OutputFile, ADescriptorLinkIsWrittenInPlaceAndALinkToAFileKeepsTheLink) {
  TempDir dir;
  // A name that behaves as /dev/stdout does: a link to /proc/self/fd/N, here a file's.
  std::string redirected = dir.path() + "/redirected.out";
  int fd = ::open(redirected.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  std::string stdout_like = dir.path() + "/stdout";
  ASSERT_EQ(::symlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), stdout_like.c_str()), 0);
  WriteOutputFile(stdout_like, "profile bytes");
  ::close(fd);
  struct stat st;
  ASSERT_EQ(::lstat(stdout_like.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // still the link
  EXPECT_EQ(ReadFile(redirected), "profile bytes");
  // A link to a file: the file it points to is replaced.
  std::string real = dir.Write("real.pb.gz", "");
  std::string link = dir.path() + "/link.pb.gz";
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  WriteOutputFile(link, "through the link");
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(ReadFile(real), "through the link");
  // A pipe is written in place.
  std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  pid_t reader = ::fork();
  if (reader == 0) {
    std::ifstream in(fifo);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ::_exit(got == "down the pipe" ? 0 : 1);
  }
  WriteOutputFile(fifo, "down the pipe");
  int status = 0;
  ::waitpid(reader, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(OutputFile, UnwritablePlacesAreOutputErrorsAndKeepOldFiles) {
  TempDir dir;
  std::string old = dir.Write("old.pb.gz", "");
  EXPECT_THROW(WriteOutputFile(dir.path() + "/no/such/dir/out.pb.gz", "x"), Error);
  EXPECT_THROW(WriteOutputFile(dir.path(), "x"), Error);  // a directory
  EXPECT_THROW(WriteOutputFile("", "x"), Error);
  if (geteuid() != 0) {  // root writes anywhere
    chmod(dir.path().c_str(), 0500);
    EXPECT_THROW(WriteOutputFile(old, "new"), Error);
    chmod(dir.path().c_str(), 0700);
  }
  EXPECT_EQ(ReadFile(old), "");
  EXPECT_EQ(Files(dir.path()), std::vector<std::string>{"old.pb.gz"});
}

TEST(OutputFile, AKillMidWriteLeavesNothingBehind) {
  // The child is killed while it writes 256 MiB; the directory must stay empty (an
  // unnamed file is linked in only once written).
  TempDir dir;
  pid_t child = ::fork();
  if (child == 0) {
    WriteOutputFile(dir.path() + "/big.pb.gz", std::string(256u << 20, 'x'));
    ::_exit(0);
  }
  ::usleep(20000);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) {
    EXPECT_EQ(Files(dir.path()), std::vector<std::string>{});
  }
}

}  // namespace
}  // namespace torch2pprof
