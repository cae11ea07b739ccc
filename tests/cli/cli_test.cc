// The command line as a table of argv cases: exit status and what is printed.
#include "cli/cli.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/help.h"
#include "cli/progress.h"
#include "test_util.h"
#include "torch2pprof/input.h"
#include "torch2pprof/report.h"

namespace torch2pprof::cli {
namespace {

using torch2pprof::testing::DecodeProfile;
using torch2pprof::testing::ReadFile;
using torch2pprof::testing::TempDir;

struct Result {
  int status;
  std::string out, err;
};

Result RunArgs(std::vector<std::string> args) {
  args.insert(args.begin(), "torch2pprof");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int status = Run(static_cast<int>(argv.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

// Help as one line a paragraph: the wrapped rows joined again, for tests that read lists in it.
std::string Flat(const std::string& help) {
  std::string out;
  for (size_t i = 0; i < help.size(); ++i) {
    if (help[i] == '\n' && i + 1 < help.size() && help[i + 1] == ' ') {
      while (i + 1 < help.size() && help[i + 1] == ' ') ++i;
      out += ' ';
    } else {
      out += help[i];
    }
  }
  return out;
}

const char* kTrace = R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]})";

TEST(Cli, HelpAndVersion) {
  for (auto args : std::vector<std::vector<std::string>>{{"--help"}, {"-h"}, {"help"}, {"-help"}}) {
    Result r = RunArgs(args);
    EXPECT_EQ(r.status, 0) << args[0];
    EXPECT_NE(r.out.find("convert"), std::string::npos) << args[0];
    EXPECT_EQ(r.err, "");
  }
  Result conv = RunArgs({"convert", "--help"});
  EXPECT_EQ(conv.status, 0);
  EXPECT_NE(conv.out.find("--threads"), std::string::npos);
  Result v = RunArgs({"--version"});
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("torch2pprof ", 0), 0u);
}

TEST(Cli, UsageErrorsExitTwoWithOneLine) {
  TempDir dir;
  std::string in = dir.Write("t.json", kTrace);
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"convert"},
      {"convert", in},
      {"convert", in, "out.pb.gz", "extra"},
      {"convert", "--no-such-flag", in, "o.pb.gz"},
      {"convert", "--threads", "many", in, "o.pb.gz"},
      {"bogus-flag-first", "--frobnicate"},
  };
  for (const auto& args : cases) {
    Result r = RunArgs(args);
    std::string shown = args.empty() ? "(none)" : args[0];
    EXPECT_EQ(r.status, 2) << shown << " " << r.err;
    if (!args.empty()) {
      EXPECT_EQ(r.err.rfind("torch2pprof: ", 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
}

// Each command's help names every kind of input it reads (the router's one list), and a
// wrong number of inputs is a line that names the command and what it takes.
TEST(Cli, HelpListsTheInputKindsAndMissingInputsSayWhatIsTaken) {
  for (const CommandInputs& c : InputsOfCommands()) {
    Result r = RunArgs({c.command, "--help"});
    ASSERT_EQ(r.status, 0) << c.command;
    r.out = Flat(r.out);
    for (InputKind k : c.kinds) EXPECT_NE(r.out.find(InputKindName(k)), std::string::npos) << c.command;
    for (InputKind k : {InputKind::kTrace, InputKind::kSnapshot, InputKind::kProfile, InputKind::kSummary}) {
      if (std::find(c.kinds.begin(), c.kinds.end(), k) == c.kinds.end()) {
        EXPECT_EQ(r.out.find(InputKindName(k)), std::string::npos) << c.command << " " << InputKindName(k);
      }
    }
  }
  TempDir dir;
  std::string in = dir.Write("t.json", kTrace);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"compare", in}, "compare takes two inputs: BASE NEW (two traces or two memory snapshots); got 1"},
      {{"compare", in, in, in}, "compare takes two inputs: BASE NEW"},
      {{"analyze"}, "analyze takes at least one input"},
      {{"summarize"}, "summarize takes one input"},
      {{"convert", in}, "convert takes IN OUT, or -o OUT and its inputs"},
  };
  for (const auto& [args, want] : cases) {
    Result r = RunArgs(args);
    EXPECT_EQ(r.status, 2) << args[0];
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// The tables --help offers are the ones the report writes: one list (the report's), read
// by help, by the CLI's check and by the renderer.
TEST(Cli, EveryCsvTableTheHelpOffersIsWritten) {
  Result help = RunArgs({"analyze", "--help"});
  ASSERT_EQ(help.status, 0);
  help.out = Flat(help.out);
  auto offered = [&](const std::string& from, const std::string& to) {
    size_t b = help.out.find(from);
    size_t e = help.out.find(to, b);
    EXPECT_NE(b, std::string::npos) << from;
    EXPECT_NE(e, std::string::npos) << to;
    std::vector<std::string> names;
    std::string list = help.out.substr(b + from.size(), e - b - from.size());
    for (size_t i = 0; i <= list.size();) {
      size_t j = std::min(list.find(", ", i), list.size());
      names.push_back(list.substr(i, j - i));
      i = j + 2;
    }
    return names;
  };
  EXPECT_EQ(offered("With --format csv: ", " (default operators)"), CsvTables());
  EXPECT_EQ(offered("several ranks: ", " (default ranks)"), RanksCsvTables());
  EXPECT_EQ(offered("a memory snapshot: ", " (default devices)"), SnapshotCsvTables());
  TempDir dir;
  std::string in = dir.Write("t.json", kTrace);
  std::string other = dir.Write("u.json", kTrace);
  for (const std::string& t : CsvTables()) {
    Result r = RunArgs({"analyze", "--format", "csv", "--table", t, in});
    EXPECT_EQ(r.status, 0) << t << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << t;
  }
  for (const std::string& t : RanksCsvTables()) {
    Result r = RunArgs({"analyze", "--quiet", "--format", "csv", "--table", t, in, other});
    EXPECT_EQ(r.status, 0) << t << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << t;
  }
  // --fail-on takes one rule per use: the two inputs after it stay inputs.
  Result r = RunArgs({"compare", "--fail-on", "step_time>+5%", "--fail-on", "kernel_time>+5%", in, other});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("not crossed kernel_time>+5%"), std::string::npos) << r.out;
}

TEST(Cli, HelpForACommandAndTheBuild) {
  for (const char* cmd : {"convert", "analyze", "compare"}) {
    Result r = RunArgs({"help", cmd});
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find(std::string("Usage: torch2pprof ") + cmd), std::string::npos) << r.out;
    EXPECT_EQ(r.out, RunArgs({cmd, "--help"}).out) << cmd;  // the same text either way
  }
  Result bogus = RunArgs({"help", "analyse"});
  EXPECT_EQ(bogus.status, 2);
  EXPECT_EQ(bogus.err, "torch2pprof: unknown command 'analyse' (did you mean analyze?)\n");
  // --version: the version, then how it was built.
  Result v = RunArgs({"--version"});
  for (const char* line : {"torch2pprof 0.", "\nmarch     x86-64", "\njson      simdjson ", "\ninflate   "}) {
    EXPECT_NE(v.out.find(line), std::string::npos) << line << " in " << v.out;
  }
}

TEST(Cli, VersionNamesTheCommitItWasBuiltFrom) {
  // The revision is read at build time, not configure time: a build after a commit (or
  // a pull) names that commit. (The tree's dirty state may change after the build.)
  std::string head;
  if (FILE* git = popen("git -C '" SOURCE_DIR "' rev-parse --short=12 HEAD 2>/dev/null", "r")) {
    char buf[64];
    while (std::fgets(buf, sizeof buf, git)) head += buf;
    pclose(git);
  }
  while (!head.empty() && head.back() == '\n') head.pop_back();
  if (head.size() < 12) GTEST_SKIP() << "not a git checkout";
  Result v = RunArgs({"--version"});
  size_t line = v.out.find("\nrevision  ");
  ASSERT_NE(line, std::string::npos) << v.out;
  std::string revision = v.out.substr(line + 11, v.out.find('\n', line + 1) - line - 11);
  EXPECT_NE(revision.find(head), std::string::npos) << revision << " is not HEAD " << head;
}

// CLI11 prints a description on one line however long; the help wraps to 100 columns
// here (no terminal), every word kept and in order.
TEST(Cli, HelpIsWrappedToTheWidthWithEveryWordKept) {
  for (std::string command : {"", "convert", "analyze", "compare", "summarize"}) {
    Result r = command.empty() ? RunArgs({"--help"}) : RunArgs({command, "--help"});
    ASSERT_EQ(r.status, 0) << command;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      const bool one_word = line.find(' ', line.find_first_not_of(' ')) == std::string::npos;
      EXPECT_TRUE(line.size() <= 100 || one_word) << command << ": " << line.size() << " columns: " << line;
    }
  }
  const std::string text = "a bb ccc dddd eeeee ffffff " + std::string(30, 'g') + " h";
  const std::string wrapped = Wrap(text, 12, 2);
  std::istringstream in(text), out(wrapped);
  std::vector<std::string> a, b;
  for (std::string w; in >> w;) a.push_back(w);
  for (std::string w; out >> w;) b.push_back(w);
  EXPECT_EQ(a, b);
  EXPECT_EQ(wrapped, "a bb ccc\n  dddd eeeee\n  ffffff\n  " + std::string(30, 'g') + "\n  h");
  EXPECT_EQ(Wrap("  x y\nz\n", 4), "  x\n  y\nz\n");  // a line's indent and the breaks kept
}

TEST(Cli, MistypedCommandsAndBadNumbersGetPlainMessages) {
  TempDir dir;
  std::string in = dir.Write("t.json", kTrace);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"analyse", in}, "torch2pprof: unknown command 'analyse' (did you mean analyze?)\n"},
      {{"conver", in, "o.pb.gz"}, "torch2pprof: unknown command 'conver' (did you mean convert?)\n"},
      {{"frobnicate"},
       "torch2pprof: unknown command 'frobnicate' (commands: convert, analyze, compare, summarize, help)\n"},
      {{"analyze", "-top", "-5", in},
       "torch2pprof: --top: expected a whole number from 0 to 1000000000, got '-5' (see 'torch2pprof analyze "
       "--help')\n"},
      {{"analyze", "--threads", "2x", in},
       "torch2pprof: --threads: expected a whole number from 0 to 1024, got '2x' (see 'torch2pprof analyze --help')\n"},
      {{"convert", "--max-depth", "99999999999999999999", in, "o.pb.gz"},
       "torch2pprof: --max-depth: expected a whole number from 2 to 1048576, got '99999999999999999999' (see "
       "'torch2pprof convert --help')\n"},
      {{"analyze", "--format", "xml", in},
       "torch2pprof: --format: xml not in {text,json,csv,html} (see 'torch2pprof analyze --help')\n"},
      {{"compare", "--frobnicate", in, in},
       "torch2pprof: The following argument was not expected: --frobnicate (see 'torch2pprof compare --help')\n"},
      {{"--frobnicate"},
       "torch2pprof: The following argument was not expected: --frobnicate (see 'torch2pprof --help')\n"},
  };
  for (const auto& [args, message] : cases) {
    Result r = RunArgs(args);
    EXPECT_EQ(r.status, 2) << args[0];
    EXPECT_EQ(r.err, message);
    EXPECT_EQ(r.out, "");
  }
  // A first word that is a file, or looks like one, is the input of convert.
  Result missing = RunArgs({"missing.json", "o.pb.gz"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.err, "torch2pprof: missing.json: cannot open: No such file or directory\n");
}

TEST(Cli, ProgressLines) {
  // Binary units, as the reports write sizes: 512 MiB of 2 GiB read in 1.25 s.
  EXPECT_EQ(ProgressText("read and parse", 512 << 20, 2048ull << 20, 1.25),
            "read and parse  512.00 MiB of 2.00 GiB (25%)  409.60 MiB/s  ETA 4s");
  EXPECT_EQ(ProgressText("aggregate", 2048ull << 20, 2048ull << 20, 8.0),
            "aggregate  2.00 GiB of 2.00 GiB (100%)  256.00 MiB/s  8.0s");
  EXPECT_EQ(ProgressText("read and parse", 3 << 20, 0, 0.5), "read and parse  3.00 MiB  6.00 MiB/s  0.5s");  // stdin
}

// --stats: a line per stage, then the JSON the load read and how much of it the parse
// workers cut (a plain file on 2 threads: all but the last range, the one with ']').
TEST(Cli, StatsSayHowMuchJsonWasReadAndWhereItWasCut) {
  TempDir dir;
  std::string json = "{\"traceEvents\": [";
  for (int i = 0; i < 20000; ++i) {
    json += std::string(i ? ",\n  " : "") + R"({"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": )" +
            std::to_string(i * 10) + R"(, "dur": 5, "args": {"pad": "0123456789012345678901234567890123456789"}})";
  }
  json += "]}";
  std::string in = dir.Write("t.json", json);
  const std::string mb = FormatBytes(static_cast<int64_t>(json.size())) + " of JSON";
  for (const char* threads : {"1", "2"}) {
    Result r = RunArgs({"convert", "--stats", "--threads", threads, in, dir.path() + "/o.pb.gz"});
    EXPECT_EQ(r.status, 0) << r.err;
    for (const char* stage : {"read and parse", "aggregate", "encode and write", "total"}) {
      EXPECT_NE(r.err.find(std::string("torch2pprof: ") + stage + " "), std::string::npos) << stage << r.err;
    }
    const size_t line = r.err.find(std::string("torch2pprof: read and parse: ") + mb + " at ");
    ASSERT_NE(line, std::string::npos) << r.err;
    // Ranges of 512 KiB, each ending after the first event that ends past that; the last
    // (with ']') is the scanner's.
    const size_t first = json.find('[') + 1;
    size_t last = first;
    while (last + (512 << 10) < json.size()) last = json.find("},\n  {", last + (512 << 10)) + 1;
    char cut[64];
    std::snprintf(cut, sizeof cut, "; %.1f%% of it cut into events on the parse workers",
                  std::string(threads) == "1" ? 0.0 : 100.0 * static_cast<double>(last - first) / json.size());
    EXPECT_NE(r.err.substr(line, r.err.find('\n', line) - line).find(cut), std::string::npos) << cut << "\n" << r.err;
  }
}

TEST(Cli, QuietSilencesWarnings) {
  TempDir dir;
  // A trace cut off mid-write, read anyway: a warning, or nothing with --quiet.
  std::string in =
      dir.Write("w.json", R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5}, {"ph")");
  Result loud = RunArgs({"analyze", "--allow-truncated", "--format", "json", in});
  EXPECT_EQ(loud.status, 0);
  EXPECT_NE(loud.err.find("warning: the trace is truncated"), std::string::npos) << loud.err;
  Result quiet = RunArgs({"analyze", "--allow-truncated", "--quiet", "--format", "json", in});
  EXPECT_EQ(quiet.status, 0);
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(quiet.out, loud.out);
}

TEST(Cli, BadInputExitsOneNamingFileAndOffset) {
  TempDir dir;
  std::string bad = dir.Write("bad.json", R"({"traceEvents": [{"ph": "X"} oops])");
  std::string out = dir.path() + "/out.pb.gz";
  Result r = RunArgs({"convert", "--strict", bad, out});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "torch2pprof: " + bad +
                       ": byte 29: expected ',' or ']' after an event in traceEvents, found 'o' (--strict)\n");
  EXPECT_FALSE(std::ifstream(out).good());  // no output at all
  // Without --strict the text is skipped, and the missing final '}' is what fails.
  Result lenient = RunArgs({"convert", bad, out});
  EXPECT_EQ(lenient.status, 1);
  EXPECT_EQ(lenient.err, "torch2pprof: " + bad +
                             ": byte 34: the trace is truncated: the input ends before the trace was complete "
                             "(--allow-truncated keeps the events before the cut)\n");
  EXPECT_FALSE(std::ifstream(out).good());

  Result missing = RunArgs({"convert", dir.path() + "/missing.json", out});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("missing.json: cannot open: No such file or directory"), std::string::npos);

  std::string empty = dir.Write("empty.json", R"({"traceEvents": [{"ph": "i", "ts": 1}]})");
  Result no_time = RunArgs({"convert", empty, out});
  EXPECT_EQ(no_time.status, 1);
  EXPECT_NE(no_time.err.find("no timed events"), std::string::npos);
}

// With threads, convert builds the stacks beside the model, uncut, and again, cut at the
// steps, when the model turns step labels on (at most 10 steps): both ways the bytes are
// those of one thread, and the few-step profile has its time split at the step bound.
TEST(Cli, ConvertBytesDoNotDependOnThreadsWithFewOrManySteps) {
  TempDir dir;
  auto trace = [](int steps) {
    std::string s = R"({"traceEvents": [)";
    auto x = [&](const std::string& name, const std::string& cat, int tid, int ts, int dur) {
      s += R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": )" +
           std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + "},";
    };
    for (int k = 0; k < steps; ++k) {
      x("ProfilerStep#" + std::to_string(k), "user_annotation", 1, k * 100, 100);
      x("aten::mm", "cpu_op", 1, k * 100 + 10, 30);
      x("aten::add", "cpu_op", 1, k * 100 + 40, 20);
      x("worker", "cpu_op", 2, k * 100 + 80, 40);  // runs over into the next step
    }
    s.pop_back();
    return s + "]}";
  };
  for (int steps : {3, 12}) {
    std::string in = dir.Write("steps" + std::to_string(steps) + ".json", trace(steps));
    std::string one = dir.path() + "/one.pb.gz", three = dir.path() + "/three.pb.gz";
    ASSERT_EQ(RunArgs({"convert", "--threads", "1", in, one}).status, 0);
    ASSERT_EQ(RunArgs({"convert", "--threads", "3", in, three}).status, 0);
    EXPECT_TRUE(ReadFile(one) == ReadFile(three)) << steps << " steps: the bytes differ";
    auto stacks = DecodeProfile(ReadFile(three)).stacks;
    size_t wall = 1;  // calls, wall, work
    int64_t worker_step0 = 0, worker_total = 0;
    for (const auto& [key, values] : stacks) {
      if (key.find("|worker") == std::string::npos) continue;
      worker_total += values[wall];
      if (key.find("step=0") != std::string::npos) worker_step0 += values[wall];
    }
    EXPECT_EQ(worker_total, steps * 40000) << steps << " steps";
    // 3 steps: step labels, and the worker's first call split at 100 us: 20 us in step 0.
    EXPECT_EQ(worker_step0, steps == 3 ? 20000 : 0) << steps << " steps";
  }
}

TEST(Cli, ConvertWritesAProfileInEveryForm) {
  TempDir dir;
  std::string in = dir.Write("t.json", kTrace);
  for (auto args : std::vector<std::vector<std::string>>{{"convert", in, dir.path() + "/a.pb.gz"},
                                                         {in, dir.path() + "/a.pb.gz"},
                                                         {"convert", "-threads", "1", in, dir.path() + "/a.pb.gz"},
                                                         {"convert", "--threads=2", in, dir.path() + "/a.pb.gz"}}) {
    std::remove((dir.path() + "/a.pb.gz").c_str());
    Result r = RunArgs(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    auto d = DecodeProfile(ReadFile(dir.path() + "/a.pb.gz"));
    // calls, wall and work; no critical unless asked.
    EXPECT_EQ(d.stacks.at("pid=1,tid=1|a"), (std::vector<int64_t>{1, 5000, 5000}));
  }
  // --critical, or --sample-type critical, adds it: one thread, no device, so the step
  // waited on all of it.
  for (auto args :
       std::vector<std::vector<std::string>>{{"convert", "--critical", in, dir.path() + "/a.pb.gz"},
                                             {"convert", "--sample-type", "critical", in, dir.path() + "/a.folded"}}) {
    Result r = RunArgs(args);
    ASSERT_EQ(r.status, 0) << r.err;
    if (args[1] == "--critical") {
      EXPECT_EQ(DecodeProfile(ReadFile(dir.path() + "/a.pb.gz")).stacks.at("pid=1,tid=1|a"),
                (std::vector<int64_t>{1, 5000, 5000, 5000}));
    } else {
      EXPECT_EQ(ReadFile(dir.path() + "/a.folded"), "tid 1;a 5000\n");
    }
  }
}

std::string RankTrace(int rank, int dur) {
  return R"({"distributedInfo": {"rank": )" + std::to_string(rank) +
         R"(}, "traceEvents": [{"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": )" +
         std::to_string(dur) + "}]}";
}

TEST(Cli, ManyRanksInOneProfile) {
  TempDir dir;
  std::string r0 = dir.Write("r0.json", RankTrace(0, 5)), r3 = dir.Write("r3.json", RankTrace(3, 7)),
              r1 = dir.Write("r1.json", RankTrace(1, 9));
  std::string out = dir.path() + "/job.pb.gz";
  Result r = RunArgs({"convert", "-o", out, r3, r0, r1});
  ASSERT_EQ(r.status, 0) << r.err;
  auto d = DecodeProfile(ReadFile(out));
  EXPECT_EQ(d.problem, "");
  EXPECT_EQ(d.stacks.at("pid=1,rank=0,tid=1|step"), (std::vector<int64_t>{1, 5000, 5000}));
  EXPECT_EQ(d.stacks.at("pid=1,rank=3,tid=1|step"), (std::vector<int64_t>{1, 7000, 7000}));
  EXPECT_EQ(d.stacks.at("pid=1,rank=1,tid=1|step"), (std::vector<int64_t>{1, 9000, 9000}));

  // A repeated rank: the inputs' positions label them apart, with a warning.
  std::string again = dir.Write("again.json", RankTrace(3, 11));
  r = RunArgs({"convert", "-o", out, r3, again});
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("warning: distributedInfo.rank is missing or repeated"), std::string::npos);
  d = DecodeProfile(ReadFile(out));
  EXPECT_EQ(d.stacks.at("pid=1,rank=0,tid=1|step"), (std::vector<int64_t>{1, 7000, 7000}));
  EXPECT_EQ(d.stacks.at("pid=1,rank=1,tid=1|step"), (std::vector<int64_t>{1, 11000, 11000}));

  // One unreadable input fails the command with its name; nothing is written.
  std::string bad = dir.Write("bad.json", "not json");
  std::string out2 = dir.path() + "/none.pb.gz";
  r = RunArgs({"convert", "-o", out2, r0, bad, r1});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "torch2pprof: " + bad + ": byte 0: expected '{' or '[' at the start of a Chrome trace, found 'n'\n");
  EXPECT_FALSE(std::ifstream(out2).good());
  // Without -o, convert takes exactly IN OUT.
  EXPECT_EQ(RunArgs({"convert", r0, r1, out2}).status, 2);
}

TEST(Cli, AnOutputNameThatSaysNoFormatIsAUsageError) {
  TempDir dir;
  std::string in = dir.Write("t.json", kTrace);
  for (const char* name : {"/out.json", "/out.svg", "/out.txt"}) {
    Result r = RunArgs({"convert", in, dir.path() + name});
    EXPECT_EQ(r.status, 2) << name;
    EXPECT_NE(r.err.find(".pb.gz (pprof), .folded (folded stacks) or .prof/.pstats"), std::string::npos) << r.err;
    EXPECT_FALSE(std::ifstream(dir.path() + name).good()) << name;
    EXPECT_EQ(RunArgs({"convert", "--format", "pprof", in, dir.path() + name}).status, 0) << name;
  }
  for (const char* name : {"/a.pb.gz", "/a.pb", "/a.pprof", "/profile", "/a.folded", "/a.prof", "/a.pstats"}) {
    EXPECT_EQ(RunArgs({"convert", in, dir.path() + name}).status, 0) << name;
  }
  EXPECT_EQ(RunArgs({"convert", in, "/dev/null"}).status, 0);
  EXPECT_EQ(RunArgs({"compare", "-o", dir.path() + "/d.folded", in, in}).status, 2);
}

TEST(Cli, RanksFromPositionsWarnAndOneFileTwiceIsAnError) {
  TempDir dir;
  std::string a = dir.Write("a.json", kTrace), b = dir.Write("b.json", kTrace);
  for (const std::string cmd : {"analyze", "convert"}) {
    std::vector<std::string> args = {cmd};
    if (cmd == "convert") args = {"convert", "-o", dir.path() + "/o.pb.gz"};
    std::vector<std::string> two = args, twice = args, linked = args;
    two.insert(two.end(), {a, b});
    Result r = RunArgs(two);
    EXPECT_EQ(r.status, 0) << cmd << r.err;
    EXPECT_NE(r.err.find("ranks are the inputs' positions"), std::string::npos) << cmd << r.err;
    twice.insert(twice.end(), {a, b, a});
    r = RunArgs(twice);
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_EQ(r.err, "torch2pprof: " + a + ": the same trace is given twice (inputs 1 and 3); each rank is one file\n");
    linked.insert(linked.end(), {a, dir.path() + "/./a.json"});
    EXPECT_EQ(RunArgs(linked).status, 2) << cmd;
  }
  // One trace: no ranks, no warning.
  EXPECT_EQ(RunArgs({"analyze", a}).err, "");
}

// Merged inputs stream through a window of `--threads` loaded traces; the profile is
// the same for every window, and the first failing input in command-line order is named.
TEST(Cli, ManyRanksStreamThroughAnyNumberOfThreads) {
  TempDir dir;
  std::vector<std::string> inputs;
  for (int rank = 0; rank < 9; ++rank) {
    inputs.push_back(dir.Write("r" + std::to_string(rank) + ".json", RankTrace(8 - rank, 10 + rank)));
  }
  std::string first;
  for (const char* threads : {"1", "2", "3", "16"}) {
    std::string out = dir.path() + "/job" + threads + ".pb.gz";
    // With the critical samples: each rank's steps walked on the threads, added in order.
    std::vector<std::string> args = {"convert", "--critical", "--threads", threads, "-o", out};
    args.insert(args.end(), inputs.begin(), inputs.end());
    Result r = RunArgs(args);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string bytes = ReadFile(out);
    if (first.empty()) first = bytes;
    EXPECT_EQ(bytes, first) << "--threads " << threads;
    auto d = DecodeProfile(bytes);
    for (int rank = 0; rank < 9; ++rank) {
      EXPECT_EQ(d.stacks.at("pid=1,rank=" + std::to_string(8 - rank) + ",tid=1|step"),
                (std::vector<int64_t>{1, (10 + rank) * 1000, (10 + rank) * 1000, (10 + rank) * 1000}));
    }
  }
  std::string late = dir.Write("late.json", "[{\"ph\": \"X\"");
  std::string early = dir.Write("early.json", "not json");
  for (const char* threads : {"1", "2", "4"}) {
    std::string out = dir.path() + "/none.pb.gz";
    Result r = RunArgs({"convert", "--threads", threads, "-o", out, inputs[0], inputs[1], early, inputs[2], late});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("torch2pprof: " + early + ": byte 0:", 0), 0u) << r.err;
    EXPECT_FALSE(std::ifstream(out).good());
  }
}

TEST(Cli, OutputProblemsExitThree) {
  TempDir dir;
  std::string in = dir.Write("t.pb.gz", kTrace);  // a trace under a profile's name
  Result self = RunArgs({"convert", in, in});
  EXPECT_EQ(self.status, 3);
  EXPECT_NE(self.err.find("refusing to overwrite an input"), std::string::npos);
  EXPECT_EQ(ReadFile(in), kTrace);
  Result nodir = RunArgs({"convert", in, dir.path() + "/none/out.pb.gz"});
  EXPECT_EQ(nodir.status, 3);
}

}  // namespace
}  // namespace torch2pprof::cli
