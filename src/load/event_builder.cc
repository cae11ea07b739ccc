#include "load/event_builder.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

constexpr int64_t kDead = std::numeric_limits<int64_t>::min();

enum CategoryFlag : uint8_t {
  kProfilerSpan = 1,  // Trace, in any case: the profiler's own span
  kPython = 2,        // python_function
  kAnnotation = 4,    // user_annotation, gpu_user_annotation: linked by External id
  kLaunchFlow = 8,    // ac2g, async_cpu_to_gpu
  kFwdBwdFlow = 16,   // fwdbwd
  kKnown = 0x80,
};

// id + 1, or 0: CUPTI correlation ids are 32-bit, and so are External ids.
uint32_t IdLink(int64_t id) { return id >= 0 && id < 0xFFFFFFFFLL ? static_cast<uint32_t>(id + 1) : 0; }

}  // namespace

EventBuilder::EventBuilder(Trace* trace, const std::string& file, const LoadOptions& options, size_t expected_events)
    : trace_(*trace), file_(file), details_(options.details), strict_(options.strict) {
  // Address space reserved for the expected events: one buffer each in huge pages, no
  // copy (and transient 3x memory) per doubling; pages never written are never resident.
  // The side tables hold a fraction of the events: a quarter, at most 16M entries each
  // (< 1 GB of address space), and they grow past that.
  trace_.intervals.reserve(expected_events);
  if (details_) trace_.args.reserve(expected_events);
  const size_t side = std::min<size_t>(expected_events / 4, size_t{1} << 24);
  python_.reserve(side);
  trace_.flows.reserve(side);
  trace_.memory.reserve(side);
  trace_.sequence.reserve(side);
  memory_name_ = trace_.strings.Intern("[memory]");
  thread_name_ = trace_.strings.Intern("thread_name");
  process_name_ = trace_.strings.Intern("process_name");
}

uint8_t EventBuilder::CategoryFlags(uint32_t cat) {
  if (cat >= category_flags_.size()) category_flags_.resize(trace_.strings.size() + 64, 0);
  uint8_t& f = category_flags_[cat];
  if (!(f & kKnown)) {
    // What a category means is RoleOfCategory's to say, for the model's rules and the
    // loader's alike (case-insensitive); flow categories are no role.
    std::string_view c = trace_.strings.Get(cat);
    const Role role = RoleOfCategory(c);
    f = kKnown;
    if (role == Role::kTrace) f |= kProfilerSpan;
    if (role == Role::kPythonFunction) f |= kPython;
    if (role == Role::kUserAnnotation || role == Role::kDeviceAnnotation) f |= kAnnotation;
    if (c == "ac2g" || c == "async_cpu_to_gpu") f |= kLaunchFlow;
    if (c == "fwdbwd") f |= kFwdBwdFlow;
  }
  return f;
}

void EventBuilder::Add(const EventBatch& batch) {
  // The batch's strings, interned once each: events then carry trace string ids.
  const auto& strings = batch.strings();
  ids_.resize(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) ids_[i] = trace_.strings.Intern(strings[i]);
  const std::vector<BatchRare>& rare = batch.rare();
  auto next_rare = rare.begin();
  for (const BatchEvent& e : batch.events()) {
    switch (e.kind) {
      case BatchEvent::kEvent:
        if (next_rare != rare.end() && &batch.events()[next_rare->event] == &e) {
          // A collective's message or a copy's bytes, kept where its event became an interval.
          const size_t before = trace_.intervals.size();
          OnEvent(e, ids_);
          const uint32_t at = static_cast<uint32_t>(before);
          if (trace_.intervals.size() > before && next_rare->name != 0) {
            trace_.collectives.push_back(CollectiveArgs{at, ids_[next_rare->name], ids_[next_rare->dtype],
                                                        next_rare->in_nelems, next_rare->out_nelems,
                                                        next_rare->group_size});
          }
          if (trace_.intervals.size() > before && next_rare->copy_bytes >= 0) {
            trace_.copy_bytes.emplace_back(at, next_rare->copy_bytes);
          }
          ++next_rare;
          break;
        }
        OnEvent(e, ids_);
        break;
      case BatchEvent::kBad:
        Bad(e.bad, e.offset, std::string(strings[e.message]));
        break;
      case BatchEvent::kRepaired:
        if (strict_) Fail(e.offset, "invalid JSON in an event (--strict)");
        ++trace_.stats.repaired;
        break;
    }
  }
}

void EventBuilder::Bad(Skip why, uint64_t offset, const std::string& what) {
  ++trace_.stats.events;  // it was an element of traceEvents all the same
  if (strict_) Fail(offset, what + " (--strict)");
  Skipped(why);
  if (trace_.stats.bad_offsets.size() < kMaxBadOffsets) trace_.stats.bad_offsets.push_back(offset);
}

void EventBuilder::Fail(uint64_t offset, const std::string& msg) {
  ThrowInput(file_, static_cast<int64_t>(offset), msg);
}

uint32_t EventBuilder::LaneId(uint32_t pid, uint32_t tid) {
  uint64_t key = static_cast<uint64_t>(pid) << 32 | tid;
  if (key == last_lane_key_) return last_lane_;  // events of one lane come in runs
  auto [it, added] = lanes_.emplace(key, static_cast<uint32_t>(trace_.lanes.size()));
  if (added) {
    trace_.lanes.push_back(Lane{std::string(trace_.strings.Get(pid)), std::string(trace_.strings.Get(tid)), "", ""});
    open_.emplace_back();
  }
  last_lane_key_ = key;
  last_lane_ = it->second;
  return it->second;
}

// Interval::link: the External id for annotations (host and device), else the correlation.
uint32_t EventBuilder::Link(const BatchEvent& e, uint32_t cat) const {
  return category_flags_[cat] & kAnnotation ? IdLink(e.args.external_id) : IdLink(e.correlation);
}

// An interval and, with details, its args, written in place field by field: built whole
// and then copied in, each read back its just-written fields (a failed store-to-load
// forward per event).
void EventBuilder::Append(std::vector<Interval>& intervals, std::vector<EventArgs>& args, int64_t start, int64_t end,
                          const BatchEvent& e, uint32_t name, uint32_t cat, uint32_t lane, uint32_t link,
                          uint32_t input_dims) {
  if (e.device >= 0 && trace_.lanes[lane].device < 0) trace_.lanes[lane].device = e.device;
  Interval& iv = intervals.emplace_back();
  iv.start_ns = start;
  iv.end_ns = end;
  iv.name = name;
  iv.cat = cat;
  iv.lane = lane;
  iv.link = link;
  if (details_) {
    EventArgs& a = args.emplace_back();
    a.external_id = e.args.external_id;
    a.input_dims = input_dims;
    a.blocks_per_sm = e.args.blocks_per_sm;
    a.occupancy = e.args.occupancy;
  }
}

void EventBuilder::AddInterval(int64_t start, int64_t end, const BatchEvent& e, uint32_t name, uint32_t cat,
                               uint32_t lane, uint32_t link, uint32_t input_dims) {
  Append(trace_.intervals, trace_.args, start, end, e, name, cat, lane, link, input_dims);
  if (e.sequence >= 0) {
    trace_.sequence.push_back(SequenceMark{static_cast<uint32_t>(trace_.intervals.size() - 1),
                                           static_cast<int32_t>(e.fwd_thread < 0 ? 0 : e.fwd_thread), e.sequence});
  }
}

void EventBuilder::AddPythonSpan(uint32_t lane, uint32_t interval, const BatchEvent& e, int64_t end) {
  PythonSpan& span = python_.emplace_back();  // in place, as AddInterval's
  span.lane = lane;
  span.interval = interval;
  span.id = e.python_id;
  span.parent = e.python_parent;
  span.start_ns = e.ts;
  span.end_ns = end;
}

void EventBuilder::OnEvent(const BatchEvent& e, const std::vector<uint32_t>& ids) {
  ++trace_.stats.events;
  std::string_view ph = trace_.strings.Get(ids[e.ph]);
  if (ph.size() != 1) {
    ++trace_.stats.phases[ph.empty() ? "(none)" : std::string(ph)];
    return;
  }
  ++phase_counts_[static_cast<unsigned char>(ph[0])];
  const uint32_t name = ids[e.name], cat = ids[e.cat];
  switch (ph[0]) {
    case 'X': {
      if (!e.has_ts) return Skipped(Skip::kNoTimestamp);
      if (!e.has_dur) return Skipped(Skip::kNoDuration);
      uint8_t flags = CategoryFlags(cat);
      if (flags & kProfilerSpan) return Skipped(Skip::kProfilerSpan);
      bool python = flags & kPython;
      if (python && e.python_id >= 0 && e.dur <= 0) {
        AddPythonSpan(LaneId(ids[e.pid], ids[e.tid]), PythonSpan::kNotAnInterval, e, e.ts + e.dur);
      }
      if (e.dur == 0) {
        // Zero-length launch calls still launch kernels: kept when they carry a correlation.
        if (details_ || IdLink(e.correlation)) {
          uint32_t lane = LaneId(ids[e.pid], ids[e.tid]);
          Append(trace_.zero_length, trace_.zero_length_args, e.ts, e.ts, e, name, cat, lane, Link(e, cat),
                 ids[e.input_dims]);
        }
        return Skipped(Skip::kZeroDuration);
      }
      if (e.dur < 0) return Skipped(Skip::kNegativeDuration);
      int64_t end;
      if (__builtin_add_overflow(e.ts, e.dur, &end)) Fail(e.offset, "ts + dur does not fit in 64-bit nanoseconds");
      uint32_t lane = LaneId(ids[e.pid], ids[e.tid]);
      AddInterval(e.ts, end, e, name, cat, lane, Link(e, cat), ids[e.input_dims]);
      if (python && e.python_id >= 0) {
        AddPythonSpan(lane, static_cast<uint32_t>(trace_.intervals.size() - 1), e, end);
      }
      break;
    }
    case 'B': {
      if (!e.has_ts) return Skipped(Skip::kNoTimestamp);
      uint32_t lane = LaneId(ids[e.pid], ids[e.tid]);
      CategoryFlags(cat);
      AddInterval(e.ts, kDead, e, name, cat, lane, Link(e, cat), ids[e.input_dims]);
      open_[lane].push_back(static_cast<uint32_t>(trace_.intervals.size() - 1));
      ++pending_;
      break;
    }
    case 'E': {
      if (!e.has_ts) return Skipped(Skip::kNoTimestamp);
      auto& stack = open_[LaneId(ids[e.pid], ids[e.tid])];
      if (stack.empty()) return Skipped(Skip::kUnmatchedEnd);
      Interval& iv = trace_.intervals[stack.back()];
      stack.pop_back();
      if (e.ts > iv.start_ns) {
        iv.end_ns = e.ts;
        --pending_;
      } else {
        Skipped(Skip::kEmptyPair);
      }
      break;
    }
    case 's':
    case 'f':
      if (e.has_id && e.has_ts) {
        uint8_t flags = CategoryFlags(cat);
        if (flags & (kLaunchFlow | kFwdBwdFlow)) {
          trace_.flows.push_back(Flow{e.ts, e.id, LaneId(ids[e.pid], ids[e.tid]), ph[0],
                                      flags & kLaunchFlow ? FlowKind::kLaunch : FlowKind::kForwardBackward});
        }
      }
      break;
    case 'i':
    case 'I':
      if (name == memory_name_ && e.has_ts) {
        trace_.memory.push_back(MemoryEvent{e.ts, LaneId(ids[e.pid], ids[e.tid]), e.device_type, e.device_id, e.bytes,
                                            e.addr, e.total_allocated, e.total_reserved});
      }
      break;
    case 'M':
      if (name == thread_name_) {
        trace_.lanes[LaneId(ids[e.pid], ids[e.tid])].thread_name = std::string(trace_.strings.Get(ids[e.meta_name]));
      } else if (name == process_name_) {
        process_names_[ids[e.pid]] = ids[e.meta_name];
      }
      break;
    default:
      break;
  }
}

void EventBuilder::Finish() {
  for (int c = 0; c < 256; ++c) {
    if (phase_counts_[c]) trace_.stats.phases[std::string(1, static_cast<char>(c))] += phase_counts_[c];
  }
  for (const auto& [key, lane] : lanes_) {
    auto it = process_names_.find(static_cast<uint32_t>(key >> 32));
    if (it != process_names_.end()) trace_.lanes[lane].process_name = std::string(trace_.strings.Get(it->second));
  }
  if (!python_.empty()) {
    PythonRepair repair = RepairPythonSpans(python_);
    std::vector<PythonSpan>().swap(python_);
    for (const auto& [i, end] : repair.clipped) trace_.intervals[i].end_ns = end;
    for (uint32_t i : repair.dropped) trace_.intervals[i].end_ns = kDead;
    trace_.stats.python_clipped = repair.clipped.size();
    trace_.stats.skipped[static_cast<int>(Skip::kPythonAfterParent)] = repair.dropped.size();
    pending_ += repair.dropped.size();
  }
  if (pending_ > 0) {
    // B events never closed, pairs whose E came too early and dropped Python spans
    // leave; file order stays, and what refers to an interval follows it.
    constexpr uint32_t kGone = UINT32_MAX;
    std::vector<uint32_t> moved(trace_.intervals.size(), kGone);
    size_t out = 0;
    for (size_t i = 0; i < trace_.intervals.size(); ++i) {
      if (trace_.intervals[i].end_ns == kDead) continue;
      moved[i] = static_cast<uint32_t>(out);
      if (details_) trace_.args[out] = trace_.args[i];
      trace_.intervals[out++] = trace_.intervals[i];
    }
    trace_.intervals.resize(out);
    if (details_) trace_.args.resize(out);
    size_t kept = 0;
    for (SequenceMark m : trace_.sequence) {
      if (moved[m.interval] == kGone) continue;
      m.interval = moved[m.interval];
      trace_.sequence[kept++] = m;
    }
    trace_.sequence.resize(kept);
    kept = 0;
    for (CollectiveArgs c : trace_.collectives) {
      if (moved[c.interval] == kGone) continue;
      c.interval = moved[c.interval];
      trace_.collectives[kept++] = c;
    }
    trace_.collectives.resize(kept);
    kept = 0;
    for (auto [i, bytes] : trace_.copy_bytes) {
      if (moved[i] != kGone) trace_.copy_bytes[kept++] = {moved[i], bytes};
    }
    trace_.copy_bytes.resize(kept);
  }
  for (auto& stack : open_) trace_.stats.skipped[static_cast<int>(Skip::kUnmatchedBegin)] += stack.size();
}

}  // namespace torch2pprof
