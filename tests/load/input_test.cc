// The one probe: every kind of input is told from its first bytes (gzip inflated first),
// whatever its name; what is no input any command reads is named; a FIFO is read once,
// its head handed out again, so a stream is never rewound.
#include "load/input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <thread>

#include "base/magic.h"
#include "test_util.h"
#include "torch2pprof/error.h"
#include "torch2pprof/output.h"

namespace torch2pprof {
namespace {

using testing::TempDir;

// A snapshot's first bytes as each protocol writes them (Python's pickle.dumps of a dict).
const std::string kPickle2 = std::string("\x80\x02}q\x00(X\x08\x00\x00\x00segmentsq\x01]q\x02", 23);
const std::string kPickle5 = std::string("\x80\x05\x95\x31\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x08segments", 23);
const std::string kPickle0 = "(dp0\nVsegments\np1\n(lp2\n(";
const std::string kPickle1 = std::string("}q\x00(X\x08\x00\x00\x00segmentsq\x01]q\x02}q", 22);
// A profile's head as convert writes it: a sample type (type 1, unit 2).
const std::string kProfile = std::string("\x0a\x04\x08\x01\x10\x02\x0a\x04\x08\x03\x10\x02", 12);

Probe ProbeOf(const std::string& bytes) { return Input(bytes, "x").probe(); }

TEST(Input, EveryKindFromItsFirstBytesGzippedOrNot) {
  const std::vector<std::pair<std::string, InputKind>> cases = {
      {"{\"traceEvents\": []}", InputKind::kTrace},
      {"\n  [{\"ph\": \"X\"}]", InputKind::kTrace},
      {"\n{\"traceEvents\": []}", InputKind::kTrace},  // opens with a newline, as a profile's 0x0a
      {"", InputKind::kTrace},                         // the trace loader says it is empty
      {kPickle2, InputKind::kSnapshot},
      {kPickle5, InputKind::kSnapshot},
      {std::string("\x80\x03}q", 4), InputKind::kSnapshot},
      {kProfile, InputKind::kProfile},
      {"{\"torch2pprof_summary\":1,\"producer\":\"x\"}", InputKind::kSummary},
      {" \n{ \"torch2pprof_summary\": 1}", InputKind::kSummary},
      {"a.py(1):_<module>;b.py(2):_f 12\n", InputKind::kFolded},  // torch's export_stacks
      {"[unknown];main;f 3\r\nmain 1\r\n", InputKind::kFolded},   // perf's, written on Windows
      {"main;f 3", InputKind::kFolded},                           // one line, no '\n'
      {"[ {\"ph\": \"X\"} ] 3\n", InputKind::kTrace},             // a JSON array of events ends like a line
      {"{\"a\": 1} 3\n", InputKind::kTrace},
      {"hello world\n", InputKind::kTrace},  // no value: the trace loader says what is wrong
  };
  for (const auto& [bytes, kind] : cases) {
    for (bool gz : {false, true}) {
      if (gz && bytes.empty()) continue;
      const Probe p = ProbeOf(gz ? Gzip(bytes) : bytes);
      EXPECT_EQ(p.kind, kind) << bytes.substr(0, 20) << (gz ? " (gzip)" : "");
      EXPECT_EQ(p.refused, "") << bytes.substr(0, 20);
    }
  }
}

TEST(Input, WhatNoCommandReadsIsNamed) {
  EXPECT_NE(ProbeOf(kPickle0).refused.find("a pickle of protocol 0 (text): memory snapshots are pickles of protocol 2 "
                                           "to 5"),
            std::string::npos);
  EXPECT_NE(ProbeOf(Gzip(kPickle1)).refused.find("a pickle of protocol 1:"), std::string::npos);
  EXPECT_NE(ProbeOf(std::string("\x80\x06}", 3)).refused.find("a pickle of protocol 6"), std::string::npos);
  const std::string keyavg =
      "[{\"name\": \"aten::mm\", \"count\": 3, \"self_cpu_us\": 86.2, \"cpu_total_us\": 143.2, \"flops\": 0}]";
  EXPECT_NE(ProbeOf(keyavg).refused.find("torch's key_averages() table, not a trace"), std::string::npos);
  // A bare-array trace whose first event happens to have a count is still a trace.
  EXPECT_EQ(ProbeOf("[{\"ph\": \"X\", \"count\": 3, \"self_cpu_us\": 1}]").refused, "");
}

std::string ErrorOf(const std::string& bytes, const std::string& command) {
  try {
    Input(bytes, "in.bin").Expect(command);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  return "(no error)";
}

// Each command's error says what the input is and what the command reads, from the one
// list (InputsOfCommands) that help prints too.
TEST(Input, ACommandThatDoesNotReadAKindSaysWhatItReads) {
  EXPECT_EQ(ErrorOf(kPickle2, "summarize"), "in.bin: a memory snapshot: summarize reads one trace");
  EXPECT_EQ(ErrorOf("{\"torch2pprof_summary\":1}", "compare"),
            "in.bin: a rank summary: compare reads two traces or two memory snapshots");
  EXPECT_EQ(ErrorOf(kProfile, "compare"),
            "in.bin: a pprof profile: compare reads two traces or two memory snapshots (go tool pprof reads profiles)");
  EXPECT_NE(ErrorOf(kProfile, "analyze").find("in.bin: a pprof profile: analyze reads"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"torch2pprof_summary\":1}", "convert").find("a rank summary: convert reads"), std::string::npos);
  EXPECT_NE(ErrorOf(kPickle0, "analyze").find("in.bin: a pickle of protocol 0 (text)"), std::string::npos);
  for (const CommandInputs& c : InputsOfCommands()) {
    EXPECT_EQ(ErrorOf("{\"traceEvents\": []}", c.command), "(no error)") << c.command;  // all read traces
    for (InputKind kind : c.kinds) EXPECT_EQ(&InputsOf(c.command), &c) << InputKindName(kind);
  }
}

// The head the probe read is handed out again: the source reads from byte 0, and a pipe
// is read once.
TEST(Input, AFifoIsProbedAndReadOnceFromItsFirstByte) {
  TempDir dir;
  std::string json = "{\"traceEvents\": [";
  for (int i = 0; i < 20000; ++i) json += "{\"ph\": \"X\", \"name\": \"op\", \"ts\": " + std::to_string(i) + "},";
  json += "{}]}";
  for (bool gz : {false, true}) {
    const std::string fifo = dir.path() + (gz ? "/fifo.gz" : "/fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << (gz ? Gzip(json) : json); });
    Input in(fifo);
    EXPECT_EQ(in.kind(), InputKind::kTrace);
    std::string back;
    char buf[1000];
    for (size_t n; (n = in.source().Read(buf, sizeof buf)) > 0;) back.append(buf, n);
    writer.join();
    EXPECT_TRUE(back == json) << (gz ? "gzip" : "plain") << ": " << back.size() << " of " << json.size();
    EXPECT_EQ(in.source().uncompressed_offset(), json.size());
  }
}

// Peek leaves the offset where Read will go on (errors name bytes from the stream's start).
TEST(Input, PeekingMovesNoOffset) {
  const std::string text(100000, 'x');
  for (bool gz : {false, true}) {
    ByteSource source(gz ? Gzip(text) : text, "t");
    EXPECT_EQ(source.Peek(10), "xxxxxxxxxx");
    EXPECT_EQ(source.uncompressed_offset(), 0u);
    char buf[7];
    EXPECT_EQ(source.Read(buf, sizeof buf), sizeof buf);
    EXPECT_EQ(source.uncompressed_offset(), 7u);
  }
}

TEST(Magic, PredicatesOnHeads) {
  EXPECT_EQ(PickleProtocol(kPickle2), 2);
  EXPECT_EQ(PickleProtocol(kPickle0), 0);
  EXPECT_EQ(PickleProtocol(kPickle1), 1);
  EXPECT_EQ(PickleProtocol("{\"traceEvents\""), -1);
  EXPECT_EQ(PickleProtocol("]"), -1);
  EXPECT_TRUE(StartsLikeProfile(kProfile));
  EXPECT_FALSE(StartsLikeProfile("\n{\"traceEvents\": []}"));
  EXPECT_TRUE(StartsLikeSummary("{\"torch2pprof_summary\":1}"));
  EXPECT_FALSE(StartsLikeSummary("{\"traceEvents\": []}"));
}

// The kind is told by the first token, past any leading white space of the head.
TEST(Input, LeadingWhiteSpaceIsReadPastToTheFirstToken) {
  const std::string blanks(5000, ' ');
  EXPECT_EQ(ProbeOf(blanks + "{\"torch2pprof_summary\":1}").kind, InputKind::kSummary);
  EXPECT_EQ(ProbeOf(blanks + "\n\t" + blanks + "{\"torch2pprof_summary\":1}").kind, InputKind::kSummary);
  EXPECT_EQ(ProbeOf(blanks + "{\"traceEvents\": []}").kind, InputKind::kTrace);
}

// A table of key_averages() rows is told from a bare-array trace by the objects' own keys,
// not by what their args hold.
TEST(Input, AKeyAveragesTableIsToldFromATraceByItsRowsOwnKeys) {
  const std::string row = R"({"key": "aten::mm", "count": 3, "self_cpu_us": 10.5, "cpu_time_total": 20})";
  EXPECT_FALSE(ProbeOf("[" + row + ", " + row + "]").refused.empty());
  const std::string event =
      R"({"name": "aten::mm", "args": {"count": 1, "self_cpu_us": 2}, "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1})";
  EXPECT_TRUE(ProbeOf("[" + event + "]").refused.empty());
  EXPECT_EQ(KeyAveragesVerdict("[" + event.substr(0, 40), false), -1);  // the head ends inside its args
  EXPECT_EQ(KeyAveragesVerdict("[" + event, true), 0);
  // A row, then a trace event: no table.
  EXPECT_EQ(KeyAveragesVerdict("[" + row + ", {\"ph\": \"X\", \"name\": \"x\"}]", true), 0);
}

// What a pipe's first bytes tell is told while its writer still holds it open.
TEST(Input, AFifoIsToldAsSoonAsItsHeadTells) {
  TempDir dir;
  const std::string fifo = dir.path() + "/summary";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::promise<void> told;
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << "{\"torch2pprof_summary\":1,\"producer\":\"torch2pprof\"," << std::flush;
    told.get_future().wait();  // open until the probe has told: a probe that waits for more hangs here
  });
  Input in(fifo);
  EXPECT_EQ(in.kind(), InputKind::kSummary);
  told.set_value();
  writer.join();
}

}  // namespace
}  // namespace torch2pprof
