// The tables of analyze on a memory snapshot, described once (table.h) for text, JSON,
// CSV and HTML.
#pragma once

#include <string>
#include <vector>

#include "report/table.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/snapshot.h"

namespace torch2pprof::report {

// A site with its device: live at the peak (oom -1) or at the OOM of that ring entry.
struct SiteRow {
  std::string device;
  int64_t oom = -1;
  int64_t whole = 0;  // the bytes live at that moment, for the share
  const SnapshotSite* site = nullptr;
};
struct OomRow {
  const SnapshotDevice* device = nullptr;
  const SnapshotOom* oom = nullptr;
};
struct LevelRow {
  std::string device;
  const SnapshotLevel* level = nullptr;
};
struct SeriesRow {
  std::string device;
  const SiteSeries* series = nullptr;
};

// A site as people read it: an absolute path in it keeps its last two parts ("step
// …/cs336_basics/optimizer.py:73"), so that what tells two sites apart stays; JSON and CSV
// keep it whole.
Cell SiteCell(const std::string& site);

std::vector<SiteRow> PeakSiteRows(const SnapshotAnalysis& a);
std::vector<SiteRow> OomSiteRows(const SnapshotAnalysis& a);
std::vector<OomRow> OomRows(const SnapshotAnalysis& a);
std::vector<LevelRow> LevelRows(const SnapshotAnalysis& a);

DataTable<SnapshotDevice> DevicesTable(const SnapshotAnalysis& a);
DataTable<SiteRow> SitesTable(const std::string& name, const std::vector<SiteRow>& rows, bool oom);
DataTable<OomRow> OomsTable(const std::vector<OomRow>& rows);
DataTable<LevelRow> TimelineTable(const std::vector<LevelRow>& rows);
// Each device's site series (SnapshotDevice::site_timeline): the site, its bytes at the
// peak and the stack of its largest allocation; the HTML stacks them over time.
std::vector<SeriesRow> SeriesRows(const SnapshotAnalysis& a);
DataTable<SeriesRow> SiteSeriesTable(const std::vector<SeriesRow>& rows);

// "cuda:0: peak 6.53 GiB allocated after ring entry 9966 of 19,136 (+1.2s into the window); ..."
std::string PeakSentence(const SnapshotDevice& d);

}  // namespace torch2pprof::report
