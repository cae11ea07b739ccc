#include "report/ranks_tables.h"

#include "base/utf8.h"
#include "report/format.h"

namespace torch2pprof::report {

std::string RankName(const RanksAnalysis& a, size_t i) { return std::to_string(a.ranks[i].rank); }

DataTable<RankSummary> RanksTable(const RanksAnalysis& a) {
  DataTable<RankSummary> t{
      "ranks",
      a.ranks,
      false,
      {{"rank", "rank", [](const RankSummary& r) { return SignedInt(r.rank); }},
       {"file", "", [](const RankSummary& r) { return Text(r.file); }},
       {"world_size", "", [](const RankSummary& r) { return SignedInt(r.world_size); }},
       {"steps", "steps", [](const RankSummary& r) { return Int(static_cast<int64_t>(r.steps.size())); }},
       {"step_median_us", "median", [](const RankSummary& r) { return Micros(r.step_median_ns); }},
       {"step_min_us", "", [](const RankSummary& r) { return Micros(r.step_min_ns); }},
       {"step_max_us", "max", [](const RankSummary& r) { return Micros(r.step_max_ns); }}}};
  for (const StepPart& part : kStepParts) {
    auto field = part.field;
    // Text shows the parts that usually tell ranks apart; JSON and CSV have all eight.
    bool shown = field == &StepRow::kernel_ns || field == &StepRow::communication_ns ||
                 field == &StepRow::cpu_exec_ns || field == &StepRow::other_ns;
    t.columns.push_back({"mean_" + std::string(part.key) + "_us", shown ? part.heading : "",
                         [field](const RankSummary& r) { return Micros(r.mean_step.*field); }});
  }
  auto wait = [&a](const RankSummary& r) -> const CollectiveWait& {
    return a.waits[static_cast<size_t>(&r - a.ranks.data())];
  };
  std::vector<Column<RankSummary>> more = {
      {"wait_us", "wait", [wait](const RankSummary& r) { return Micros(wait(r).wait_ns); }},
      {"transfer_us", "", [wait](const RankSummary& r) { return Micros(wait(r).transfer_ns); }},
      {"gpu_utilization", "GPU util",
       [](const RankSummary& r) { return Fraction(r.gpu_utilization, r.gpu_window_ns > 0); }},
      {"communication_us", "", [](const RankSummary& r) { return Micros(r.communication_ns); }},
      {"compute_us", "compute", [](const RankSummary& r) { return Micros(r.compute_ns); }},
      {"non_compute_us", "", [](const RankSummary& r) { return Micros(r.non_compute_ns); }},
      {"gpu_idle_us", "idle", [](const RankSummary& r) { return Micros(r.gpu_idle_ns); }},
      {"gpu_span_us", "", [](const RankSummary& r) { return Micros(r.gpu_span_ns); }},
      {"comm_kernel_us", "", [](const RankSummary& r) { return Micros(r.comm_kernel_ns); }},
      {"comm_compute_overlap", "overlap",
       [](const RankSummary& r) { return r.comm_kernel_ns > 0 ? Share(r.overlap_ns, r.comm_kernel_ns) : Null(); }},
      {"memory_peak_bytes", "mem peak", [](const RankSummary& r) { return ByteCount(r.memory_peak_bytes); }},
      {"memory_device", "", [](const RankSummary& r) { return Text(r.memory_device); }},
  };
  t.columns.insert(t.columns.end(), more.begin(), more.end());
  return t;
}

DataTable<SlowRank> SlowRanksTable(const RanksAnalysis& a) {
  return {"slow_ranks",
          a.slow_ranks,
          true,
          {{"rank", "rank", [&a](const SlowRank& s) { return SignedInt(a.ranks[s.rank].rank); }},
           {"metric", "metric", [](const SlowRank& s) { return Text(s.metric); }},
           {"value_us", "value", [](const SlowRank& s) { return Micros(s.value_ns); }},
           {"median_us", "median of ranks", [](const SlowRank& s) { return Micros(s.median_ns); }},
           {"excess", "excess",
            [](const SlowRank& s) {
              return Cell{Cell::kNumber, Printf("%.6g", s.excess), Printf("+%.1f%%", 100 * s.excess)};
            }},
           {"part", "part", [](const SlowRank& s) { return Text(s.part); }},
           {"part_delta_us", "part per step", [](const SlowRank& s) { return Micros(s.part_delta_ns); }}}};
}

DataTable<RankRecommendation> RanksRecommendationsTable(const RanksAnalysis& a) {
  return {"recommendations",
          a.recommendations,
          false,
          {{"id", "", [](const RankRecommendation& r) { return Text(std::string(r.id())); }},
           {"saving_us", "", [](const RankRecommendation& r) { return Micros(r.saving_ns); }},
           {"text", "", [&a](const RankRecommendation& r) { return Text(RankRecommendationText(a, r)); }}}};
}

std::string RankList(const RanksAnalysis& a, const std::vector<size_t>& ranks) {
  std::string out;
  for (size_t i : ranks) out += (out.empty() ? "" : " ") + RankName(a, i);
  return out;
}

DataTable<Straggler> StragglersTable(const RanksAnalysis& a) {
  return {"stragglers",
          a.stragglers,
          false,
          {{"rank", "rank", [&a](const Straggler& l) { return SignedInt(a.ranks[l.rank].rank); }},
           {"waiters", "waited for by",
            [&a](const Straggler& l) {
              Cell c = Text(RankList(a, l.waiters));
              if (l.waiters.size() > 8) c.display = std::to_string(l.waiters.size()) + " ranks";
              return c;
            }},
           {"waited_us", "wait per step", [](const Straggler& l) { return Micros(l.waited_ns); }},
           {"collective", "in", [](const Straggler& l) { return Text(l.collective); }},
           {"part", "its part", [](const Straggler& l) { return Text(l.part); }},
           {"part_delta_us", "above the others", [](const Straggler& l) { return Micros(l.part_delta_ns); }}}};
}

Cell SpreadCell(const RankSpread& sp, double v) {
  if (sp.unit == RankSpread::kFraction) return Fraction(v, true);
  const int64_t whole = static_cast<int64_t>(v);
  return sp.unit == RankSpread::kBytes ? ByteCount(whole) : Micros(whole);
}

DataTable<RankSpread> SpreadTable(const RanksAnalysis& a) {
  auto unit = [](const RankSpread& sp) {
    return sp.unit == RankSpread::kFraction ? "" : sp.unit == RankSpread::kBytes ? "_bytes" : "_us";
  };
  DataTable<RankSpread> t{"spreads", a.spreads, false, {}};
  t.columns = {
      {"name", "", [unit](const RankSpread& sp) { return Text(sp.key + unit(sp)); }},
      {"", "over the ranks", [](const RankSpread& sp) { return Text(sp.heading); }},
      {"min", "min", [](const RankSpread& sp) { return SpreadCell(sp, sp.min); }},
      {"min_rank", "rank", [&a](const RankSpread& sp) { return SignedInt(a.ranks[sp.min_rank].rank); }},
      {"median", "median", [](const RankSpread& sp) { return SpreadCell(sp, sp.median); }},
      {"p90", "p90", [](const RankSpread& sp) { return SpreadCell(sp, sp.p90); }},
      {"max", "max", [](const RankSpread& sp) { return SpreadCell(sp, sp.max); }},
      {"max_rank", "rank", [&a](const RankSpread& sp) { return SignedInt(a.ranks[sp.max_rank].rank); }},
  };
  return t;
}

std::string CollectivesNote(const RanksAnalysis& a) {
  if (!a.collectives_left_out) return "";
  return "(" + FormatCount(a.collectives_left_out) +
         " more collectives by name, with no larger spread, are left out: a row holds a value per rank, and the rows "
         "kept are as many as the ranks' collectives pay for)";
}

std::string AlignmentNote(const RanksAnalysis& a) {
  if (!a.steps_by_position) return "";
  return "(the ranks' step names differ, as when each rank starts at its own iteration: step k is each rank's k-th "
         "analysed step, up to the ranks' median count)";
}

DataTable<CollectiveRow> CollectivesTable(const RanksAnalysis& a) {
  DataTable<CollectiveRow> t{"collectives",
                             a.collectives,
                             true,
                             {{"name", "collective", [](const CollectiveRow& c) { return Text(c.name); }},
                              {"kind", "kind", [](const CollectiveRow& c) { return Text(c.kind); }}}};
  if (a.ranks.size() <= 8) {  // a column per rank while the text stays within 120 columns
    for (size_t i = 0; i < a.ranks.size(); ++i) {
      t.columns.push_back(
          {"", "rank " + RankName(a, i), [i](const CollectiveRow& c) { return Micros(c.total_ns[i]); }});
    }
  }
  std::vector<Column<CollectiveRow>> more = {
      {"min_us", "min", [](const CollectiveRow& c) { return Micros(c.min_ns); }},
      {"min_rank", "least", [&a](const CollectiveRow& c) { return SignedInt(a.ranks[c.min_rank].rank); }},
      {"max_us", "max", [](const CollectiveRow& c) { return Micros(c.max_ns); }},
      {"max_rank", "most", [&a](const CollectiveRow& c) { return SignedInt(a.ranks[c.max_rank].rank); }},
      {"spread_us", "spread", [](const CollectiveRow& c) { return Micros(c.max_ns - c.min_ns); }},
  };
  t.columns.insert(t.columns.end(), more.begin(), more.end());
  t.json_more = [](Json& j, const CollectiveRow& c) {
    j.Key("calls");
    j.Open('[');
    for (uint64_t n : c.calls) j.Int(static_cast<int64_t>(n));
    j.Close(']');
    j.Key("total_us");
    j.Open('[');
    for (int64_t ns : c.total_ns) j.Micros(ns);
    j.Close(']');
  };
  return t;
}

DataTable<StepAlignment> AlignmentTable(const RanksAnalysis& a) {
  DataTable<StepAlignment> t{
      "step_alignment", a.steps, true, {{"name", "step", [](const StepAlignment& s) { return Text(s.name); }}}};
  if (a.ranks.size() <= 8) {
    for (size_t i = 0; i < a.ranks.size(); ++i) {
      t.columns.push_back({"", "rank " + RankName(a, i),
                           [i](const StepAlignment& s) { return s.total_ns[i] < 0 ? Null() : Micros(s.total_ns[i]); }});
    }
  }
  std::vector<Column<StepAlignment>> more = {
      {"slowest_rank", "slowest", [&a](const StepAlignment& s) { return SignedInt(a.ranks[s.slowest].rank); }},
      {"slowest_us", "", [](const StepAlignment& s) { return Micros(s.total_ns[s.slowest]); }},
      {"fastest_rank", "fastest", [&a](const StepAlignment& s) { return SignedInt(a.ranks[s.fastest].rank); }},
      {"fastest_us", "", [](const StepAlignment& s) { return Micros(s.total_ns[s.fastest]); }},
      {"spread_us", "spread", [](const StepAlignment& s) { return Micros(s.spread_ns); }},
  };
  t.columns.insert(t.columns.end(), more.begin(), more.end());
  t.json_more = [](Json& j, const StepAlignment& s) {
    j.Key("total_us");
    j.Open('[');
    for (int64_t ns : s.total_ns) ns < 0 ? j.Raw("null") : j.Micros(ns);
    j.Close(']');
  };
  return t;
}

std::string LateSentence(const RanksAnalysis& a, const Straggler& l, const std::string& joint) {
  // Past a handful of ranks, their number: the table (and JSON, CSV) list them all.
  const std::string who = l.waiters.size() == 1   ? "rank " + RankList(a, l.waiters) + " waits"
                          : l.waiters.size() <= 8 ? "ranks " + RankList(a, l.waiters) + " wait"
                                                  : std::to_string(l.waiters.size()) + " ranks wait";
  std::string out = "rank " + RankName(a, l.rank) + " arrives last: " + who + " " + FormatDuration(l.waited_ns) +
                    " per step for it in " + FitLeft(VisibleText(l.collective), 40);
  if (!l.part.empty()) {
    std::string heading = l.part;
    for (const StepPart& p : kStepParts) {
      if (l.part == p.key) heading = p.heading;
    }
    out += joint + "its step spends " + heading + " +" + FormatDuration(l.part_delta_ns) +
           " per step above the other ranks' median";
  }
  return out;
}

std::string WaitNote(const RanksAnalysis& a) {
  bool no_comm_kernels = false;
  for (const RankSummary& r : a.ranks) no_comm_kernels |= r.comm_kernel_ns == 0;
  return std::string(a.waits_from_arrivals
                         ? "(wait: time in collectives from a rank's arrival until the last rank arrives, by the "
                           "traces' wall clocks"
                         : "(wait: time in collectives beyond the shortest rank's in each, waiting for the others; "
                           "the clocks do not compare") +
         (no_comm_kernels ? "; overlap: the share of communication kernels' time that compute overlaps, - where no "
                            "communication kernel ran (gloo's collectives run on the host)"
                          : "; overlap: the share of communication kernels' time that compute overlaps") +
         ")";
}

std::string NoLateRank(const RanksAnalysis& a) {
  if (a.ranks.size() > 1 && !a.waits.empty() && a.waits[0].instances > 0) {
    return "(none: no rank waits more than " + Printf("%.0f", 100 * a.threshold) +
           "% of the median step for another in collectives)";
  }
  return "(no collective matched on every rank)";
}

std::string NoSlowRank(const RanksAnalysis& a) {
  return "(none: every rank's median step and compute time is within " + Printf("%.0f", 100 * a.threshold) +
         "% of the median)";
}

}  // namespace torch2pprof::report
