// analyze on a memory snapshot: per device the dump's segments (reserved, allocated,
// fragmentation), the peak and the out-of-memory events with the code holding memory
// there; each table described once (table.h) and written as text, JSON and CSV.
#include <string>
#include <unordered_map>
#include <vector>

#include "report/snapshot_tables.h"
#include "torch2pprof/error.h"
#include "torch2pprof/input.h"
#include "torch2pprof/report.h"

namespace torch2pprof {

using namespace report;

namespace report {

Cell SiteCell(const std::string& site) {
  Cell cell = Text(site);
  if (Columns(cell.display) > 60) cell.display = CutPath(cell.display);
  return cell;
}

std::vector<SiteRow> PeakSiteRows(const SnapshotAnalysis& a) {
  std::vector<SiteRow> rows;
  for (const SnapshotDevice& d : a.devices) {
    for (const SnapshotSite& s : d.peak_sites) rows.push_back(SiteRow{d.device, -1, d.peak_bytes, &s});
  }
  return rows;
}

std::vector<SiteRow> OomSiteRows(const SnapshotAnalysis& a) {
  std::vector<SiteRow> rows;
  for (const SnapshotDevice& d : a.devices) {
    for (const SnapshotOom& o : d.ooms) {
      for (const SnapshotSite& s : o.sites) rows.push_back(SiteRow{d.device, o.entry, o.allocated_bytes, &s});
    }
  }
  return rows;
}

std::vector<OomRow> OomRows(const SnapshotAnalysis& a) {
  std::vector<OomRow> rows;
  for (const SnapshotDevice& d : a.devices) {
    for (const SnapshotOom& o : d.ooms) rows.push_back(OomRow{&d, &o});
  }
  return rows;
}

std::vector<LevelRow> LevelRows(const SnapshotAnalysis& a) {
  std::vector<LevelRow> rows;
  for (const SnapshotDevice& d : a.devices) {
    for (const SnapshotLevel& l : d.timeline) rows.push_back(LevelRow{d.device, &l});
  }
  return rows;
}

std::vector<SeriesRow> SeriesRows(const SnapshotAnalysis& a) {
  std::vector<SeriesRow> rows;
  for (const SnapshotDevice& d : a.devices) {
    for (const SiteSeries& s : d.site_timeline) rows.push_back(SeriesRow{d.device, &s});
  }
  return rows;
}

DataTable<SeriesRow> SiteSeriesTable(const std::vector<SeriesRow>& rows) {
  return {"site_series",
          rows,
          false,
          {{"device", "device", [](const SeriesRow& r) { return Text(r.device); }},
           {"site", "site", [](const SeriesRow& r) { return Text(r.series->site); }},
           {"peak_bytes", "at the peak", [](const SeriesRow& r) { return ByteCount(r.series->peak_bytes); }},
           {"stack", "largest allocation's stack", [](const SeriesRow& r) {
              std::string s;
              for (const std::string& f : r.series->stack) s += (s.empty() ? "" : " <- ") + FrameLabel(f);
              return Text(s);
            }}}};
}

DataTable<SnapshotDevice> DevicesTable(const SnapshotAnalysis& a) {
  return {
      "devices",
      a.devices,
      false,
      {{"device", "device", [](const SnapshotDevice& d) { return Text(d.device); }},
       {"segments", "segments", [](const SnapshotDevice& d) { return Int(d.segments); }},
       {"reserved_bytes", "reserved", [](const SnapshotDevice& d) { return ByteCount(d.reserved_bytes); }},
       {"allocated_bytes", "allocated", [](const SnapshotDevice& d) { return ByteCount(d.allocated_bytes); }},
       {"rounding_bytes", "rounding", [](const SnapshotDevice& d) { return ByteCount(d.rounding_bytes); }},
       {"pending_free_bytes", "pending free", [](const SnapshotDevice& d) { return ByteCount(d.pending_free_bytes); }},
       {"free_bytes", "cached free", [](const SnapshotDevice& d) { return ByteCount(d.free_bytes); }},
       {"largest_free_bytes", "largest free", [](const SnapshotDevice& d) { return ByteCount(d.largest_free_bytes); }},
       {"free_internal_share", "internal",
        [](const SnapshotDevice& d) { return Share(d.rounding_bytes, d.rounding_bytes + d.free_bytes); }},
       {"peak_bytes", "peak", [](const SnapshotDevice& d) { return ByteCount(d.peak_bytes); }},
       {"peak_entry", "", [](const SnapshotDevice& d) { return SignedInt(d.peak_entry); }},
       {"peak_time_us", "", [](const SnapshotDevice& d) { return SignedInt(d.peak_time_us); }},
       {"before_bytes", "", [](const SnapshotDevice& d) { return ByteCount(d.before_bytes); }},
       {"ring_entries", "", [](const SnapshotDevice& d) { return Int(d.ring_entries); }},
       {"allocs", "", [](const SnapshotDevice& d) { return Int(d.allocs); }},
       {"frees", "", [](const SnapshotDevice& d) { return Int(d.frees); }},
       {"segment_allocs", "", [](const SnapshotDevice& d) { return Int(d.segment_allocs); }},
       {"segment_frees", "", [](const SnapshotDevice& d) { return Int(d.segment_frees); }},
       {"first_time_us", "", [](const SnapshotDevice& d) { return SignedInt(d.first_time_us); }},
       {"last_time_us", "", [](const SnapshotDevice& d) { return SignedInt(d.last_time_us); }},
       {"consistent", "",
        [](const SnapshotDevice& d) {
          return Cell{Cell::kNumber, d.consistent ? "true" : "false", ""};
        },
        false}}};
}

DataTable<SiteRow> SitesTable(const std::string& name, const std::vector<SiteRow>& rows, bool oom) {
  std::vector<Column<SiteRow>> columns = {
      {"site", "site", [](const SiteRow& r) { return SiteCell(r.site->site); }},
      {"device", "", [](const SiteRow& r) { return Text(r.device); }},
      {"bytes", "bytes", [](const SiteRow& r) { return ByteCount(r.site->bytes); }},
      {"share", "share", [](const SiteRow& r) { return Share(r.site->bytes, r.whole); }},
      {"blocks", "blocks", [](const SiteRow& r) { return Int(r.site->blocks); }}};
  if (oom) columns.insert(columns.begin() + 2, {"oom_entry", "", [](const SiteRow& r) { return SignedInt(r.oom); }});
  return {name, rows, true, std::move(columns)};
}

DataTable<OomRow> OomsTable(const std::vector<OomRow>& rows) {
  return {
      "ooms",
      rows,
      false,
      {{"device", "device", [](const OomRow& r) { return Text(r.device->device); }},
       {"entry", "ring entry", [](const OomRow& r) { return SignedInt(r.oom->entry); }},
       {"time_us", "", [](const OomRow& r) { return SignedInt(r.oom->time_us); }},
       {"", "at",
        [](const OomRow& r) { return Text("+" + FormatDuration((r.oom->time_us - r.device->first_time_us) * 1000)); }},
       {"requested_bytes", "asked for", [](const OomRow& r) { return ByteCount(r.oom->requested_bytes); }},
       {"device_free_bytes", "free on device",
        [](const OomRow& r) { return r.oom->device_free_bytes < 0 ? Null() : ByteCount(r.oom->device_free_bytes); }},
       {"allocated_bytes", "allocated", [](const OomRow& r) { return ByteCount(r.oom->allocated_bytes); }},
       {"reserved_bytes", "reserved", [](const OomRow& r) { return ByteCount(r.oom->reserved_bytes); }},
       {"cause", "cause",
        [](const OomRow& r) {
          return r.oom->cause == OomCause::kDeviceFull     ? Text("device_full")
                 : r.oom->cause == OomCause::kProcessLimit ? Text("allocator_limit")
                                                           : Null();
        }},
       {"fragmented", "fragmented", [](const OomRow& r) {
          return Cell{Cell::kNumber, r.oom->fragmented ? "true" : "false", r.oom->fragmented ? "yes" : "no"};
        }}}};
}

// Why the allocation failed, from the snapshot's numbers (SnapshotOom::cause); "" when
// the snapshot does not say what the device had free.
std::string OomWhy(const SnapshotAnalysis& a, const SnapshotOom& oom) {
  std::string why;
  const std::string asked = Bytes(oom.requested_bytes), reserved = Bytes(oom.reserved_bytes);
  if (oom.cause == OomCause::kDeviceFull) {
    why = "the device had " + Bytes(oom.device_free_bytes) + " free, less than the " + asked +
          " asked for: it was full, with " + reserved +
          " reserved by this process (the rest: other processes and the CUDA context).";
  } else if (oom.cause == OomCause::kProcessLimit) {
    why = "the device had " + Bytes(oom.device_free_bytes) + " free, more than the " + asked +
          " asked for: the caching allocator refused it under its own limit, a per-process memory fraction "
          "(torch.cuda.set_per_process_memory_fraction), which lies between the " +
          reserved + " reserved and that plus the new segment the request needed.";
  }
  if (oom.fragmented) {
    why += std::string(why.empty() ? "" : " ") + Bytes(oom.reserved_bytes - oom.allocated_bytes) + " of the " +
           reserved + " reserved was cached but not allocated, enough for the request in all, in pieces none of " +
           "which held it: fragmentation" +
           (a.expandable_segments == 0
                ? "; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets the allocator grow a segment instead."
                : ".");
  }
  return why;
}

DataTable<LevelRow> TimelineTable(const std::vector<LevelRow>& rows) {
  return {"timeline",
          rows,
          false,
          {{"device", "device", [](const LevelRow& r) { return Text(r.device); }},
           {"time_us", "time_us", [](const LevelRow& r) { return SignedInt(r.level->time_us); }},
           {"allocated_bytes", "allocated", [](const LevelRow& r) { return ByteCount(r.level->allocated_bytes); }},
           {"reserved_bytes", "reserved", [](const LevelRow& r) { return ByteCount(r.level->reserved_bytes); }}}};
}

std::string PeakSentence(const SnapshotDevice& d) {
  std::string at = d.peak_entry < 0
                       ? std::string("before the recorded window")
                       : "after ring entry " + std::to_string(d.peak_entry) + " of " +
                             Count(static_cast<uint64_t>(d.ring_entries)) + " (+" +
                             FormatDuration((d.peak_time_us - d.first_time_us) * 1000) + " into the window)";
  return d.device + ": peak " + Bytes(d.peak_bytes) + " allocated " + at + "; " + Bytes(d.before_bytes) +
         " were allocated before the window";
}

}  // namespace report

namespace {

const CsvTable<SnapshotAnalysis> kSnapshotCsvTables[] = {
    {"devices", [](const SnapshotAnalysis& a, int rows) { return WriteCsv(DevicesTable(a), rows); }, kDefault},
    {"peak_sites", [](const SnapshotAnalysis& a,
                      int rows) { return WriteCsv(SitesTable("peak_sites", PeakSiteRows(a), false), rows); }},
    {"ooms", [](const SnapshotAnalysis& a, int rows) { return WriteCsv(OomsTable(OomRows(a)), rows); }},
    {"oom_sites",
     [](const SnapshotAnalysis& a, int rows) { return WriteCsv(SitesTable("oom_sites", OomSiteRows(a), true), rows); }},
    {"timeline", [](const SnapshotAnalysis& a, int rows) { return WriteCsv(TimelineTable(LevelRows(a)), rows); }},
    {"site_series", [](const SnapshotAnalysis& a, int rows) { return WriteCsv(SiteSeriesTable(SeriesRows(a)), rows); }},
};

}  // namespace

const std::vector<std::string>& SnapshotCsvTables() {
  static const std::vector<std::string> tables = CsvNames(kSnapshotCsvTables);
  return tables;
}

const std::string& DefaultSnapshotCsvTable() {
  static const std::string table = DefaultName(kSnapshotCsvTables);
  return table;
}

std::string RenderSnapshotText(const SnapshotAnalysis& a, const ReportOptions& o) {
  std::string out = "torch2pprof analyze: " + FitLeft(VisibleText(a.file), kWidth - 60) + " (CUDA memory snapshot, " +
                    std::to_string(a.devices.size()) + " device" + (a.devices.size() == 1 ? "" : "s") + ")\n";
  out += Section(
      "Devices at the dump (free as torch's _memory_viz segment summary: rounding is internal, cached "
      "free external)");
  out += WriteText(DevicesTable(a), 0);
  if (a.overflowed) out += "The ring of allocator actions overflowed: the window starts at its oldest entry.\n";
  for (const SnapshotDevice& d : a.devices) {
    if (!d.consistent) {
      out += d.device +
             ": the ring and the segments disagree (a synthetic or edited snapshot?): the peak is the "
             "ring's replay\n";
    }
  }
  // Each device's rows, grouped in one pass (a device a row: 100,000 devices were 10^10 compares).
  std::unordered_map<std::string, std::vector<SiteRow>> by_device;
  for (SiteRow& r : PeakSiteRows(a)) by_device[r.device].push_back(std::move(r));
  for (const SnapshotDevice& d : a.devices) {
    out += Section("Live at the peak, by the code that allocated it (innermost Python line, else the backward node)");
    out += Wrap(PeakSentence(d), "", "  ") + "\n";
    const std::vector<SiteRow> rows = std::move(by_device[d.device]);
    out += rows.empty() ? "(nothing allocated)\n" : WriteText(SitesTable("peak_sites", rows, false), o.top);
    if (rows.size() > Limit(rows.size(), o.top)) {
      out += "(" + std::to_string(rows.size() - Limit(rows.size(), o.top)) + " more; -top 0 shows all)\n";
    }
  }
  const std::vector<OomRow> ooms = OomRows(a);
  out += Section("Out of memory");
  if (ooms.empty()) {
    out += "(no oom entry in the ring)\n";
  } else {
    out += WriteText(OomsTable(ooms), 0);
    const OomRow& last = ooms.back();
    std::vector<SiteRow> rows;
    for (const SnapshotSite& s : last.oom->sites) {
      rows.push_back(SiteRow{last.device->device, last.oom->entry, last.oom->allocated_bytes, &s});
    }
    const std::string why = OomWhy(a, *last.oom);
    if (!why.empty()) out += Wrap("Why the last failed: " + why, "", "  ");
    out += "\nLive at the last: " + last.device->device + " asked for " + Bytes(last.oom->requested_bytes) + " with " +
           Bytes(last.oom->allocated_bytes) + " allocated\n";
    out += WriteText(SitesTable("oom_sites", rows, false), o.top);
  }
  return VisibleLines(out);
}

std::string RenderSnapshotJson(const SnapshotAnalysis& a, const ReportOptions& o) {
  Json j;
  j.Open('{');
  j.Field("file", a.file);
  j.Key("overflowed");
  j.Raw(a.overflowed ? "true" : "false");
  WriteJson(j, DevicesTable(a), o.rows);
  WriteJson(j, SitesTable("peak_sites", PeakSiteRows(a), false), o.rows);
  const std::vector<OomRow> ooms = OomRows(a);
  WriteJson(j, OomsTable(ooms), o.rows);
  WriteJson(j, SitesTable("oom_sites", OomSiteRows(a), true), o.rows);
  const std::vector<LevelRow> levels = LevelRows(a);
  WriteJson(j, TimelineTable(levels), 0);
  WriteJson(j, SiteSeriesTable(SeriesRows(a)), 0);
  j.Close('}');
  return j.out + "\n";
}

std::string RenderSnapshotCsv(const SnapshotAnalysis& a, const ReportOptions& o) {
  return WriteCsvTable(kSnapshotCsvTables, a, o, std::string("for ") + InputKindName(InputKind::kSnapshot) + ", ");
}

}  // namespace torch2pprof
