#include "load/event_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

// An event as the parser hands it on; the views point into the test's own strings.
struct Ev {
  std::string ph, name, cat, pid, tid, meta;
  int64_t ts_us = 0, dur_us = -1;
};

RawEvent Raw(const Ev& e, uint64_t offset) {
  RawEvent r;
  r.ph = e.ph, r.name = e.name, r.cat = e.cat, r.pid = e.pid, r.tid = e.tid, r.meta_name = e.meta;
  r.ts = e.ts_us * 1000, r.has_ts = true;
  if (e.dur_us >= 0) r.dur = e.dur_us * 1000, r.has_dur = true;
  r.offset = offset;
  return r;
}

// The trace built from the events cut into batches at `cuts` (indexes into events).
Trace Build(const std::vector<Ev>& events, const std::vector<size_t>& cuts, bool strict = false) {
  Trace t;
  LoadOptions options;
  options.strict = strict;
  EventBuilder builder(&t, "t.json", options, events.size());
  EventBatch batch;
  size_t next_cut = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (next_cut < cuts.size() && cuts[next_cut] == i) {
      builder.Add(batch);
      batch.Clear();
      ++next_cut;
    }
    batch.OnEvent(Raw(events[i], 100 * i));
  }
  builder.Add(batch);
  builder.Finish();
  return t;
}

// Everything the stages read of a trace, with strings as text: ids may differ.
std::string Describe(const Trace& t) {
  std::string s;
  for (const Lane& l : t.lanes) s += "lane " + l.pid + "/" + l.tid + " '" + l.thread_name + "'\n";
  for (const Interval& iv : t.intervals) {
    s += std::to_string(iv.start_ns) + ".." + std::to_string(iv.end_ns) + " lane " + std::to_string(iv.lane) + " " +
         std::string(t.strings.Get(iv.name)) + " [" + std::string(t.strings.Get(iv.cat)) + "]\n";
  }
  s += "events " + std::to_string(t.stats.events) + " skipped " + std::to_string(t.stats.skipped_total());
  return s;
}

std::vector<Ev> Sample() {
  std::vector<Ev> ev;
  ev.push_back({"M", "thread_name", "", "1", "7", "main"});
  for (int i = 0; i < 6; ++i) {
    const std::string k = std::to_string(i);
    ev.push_back({"X", "aten::mm", "cpu_op", "1", "7", "", 10 * i, 5});
    ev.push_back({"B", "span" + k, "user_annotation", "1", "8", "", 10 * i + 1});
    ev.push_back({"X", "kernel" + std::to_string(i % 2), "kernel", "0", "stream 7", "", 10 * i + 2, 3});
    ev.push_back({"E", "span" + k, "user_annotation", "1", "8", "", 10 * i + 6});
  }
  ev.push_back({"M", "thread_name", "", "1", "8", "worker"});
  return ev;
}

TEST(EventBuilder, BatchesCutAnywhereBuildTheTraceOfOneBatch) {
  // The parse pool cuts the events into chunks wherever reads end: a B in one batch and
  // its E in the next, a name interned in two batches, a thread named after its events.
  const std::vector<Ev> events = Sample();
  const std::string one = Describe(Build(events, {}));
  EXPECT_NE(one.find("lane 1/8 'worker'"), std::string::npos) << one;
  EXPECT_NE(one.find("1000..6000 lane"), std::string::npos) << one;  // span0: its B and E
  for (size_t cut = 1; cut < events.size(); ++cut) {
    EXPECT_EQ(Describe(Build(events, {cut})), one) << "cut before event " << cut;
  }
  std::vector<size_t> every;
  for (size_t i = 1; i < events.size(); ++i) every.push_back(i);
  EXPECT_EQ(Describe(Build(events, every)), one) << "a batch per event";
}

TEST(EventBuilder, ABadEventIsCountedOrWithStrictAnErrorAtItsOffset) {
  std::vector<Ev> events = Sample();
  Trace lenient;
  {
    LoadOptions options;
    EventBuilder builder(&lenient, "t.json", options, 8);
    EventBatch batch;
    batch.OnEvent(Raw(events[1], 0));
    batch.Bad(Skip::kBadJson, 4242, "an event that is no JSON");
    batch.OnEvent(Raw(events[2], 5000));
    builder.Add(batch);
    builder.Finish();
  }
  EXPECT_EQ(lenient.stats.skipped[static_cast<int>(Skip::kBadJson)], 1u);
  EXPECT_EQ(lenient.stats.bad_offsets, std::vector<uint64_t>{4242});
  try {
    Trace strict;
    LoadOptions options;
    options.strict = true;
    EventBuilder builder(&strict, "t.json", options, 8);
    EventBatch batch;
    batch.Bad(Skip::kBadJson, 4242, "an event that is no JSON");
    builder.Add(batch);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.offset(), 4242);
    EXPECT_NE(std::string(e.what()).find("t.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace torch2pprof
