// The shared parts of the report's HTML pages (report/html_page.h); the style and the
// script are html_report.cc's, with PageStart and PageEnd.
#include "report/html_page.h"

#include <cstdio>
#include <utility>

#include "report/flame_graph.h"

namespace torch2pprof::report {

std::string Section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\"><h2>" + Html(title) + "</h2>\n" + body + "</section>\n";
}

std::string Note(const std::string& s) { return "<p class=\"note\">" + Html(s) + "</p>\n"; }

// The flame graph of convert's profile (FlameOf): the data as JSON for the script, which
// draws it; a note says what the values are and what was folded.
std::string FlameBody(const FlameGraph& f, const std::string& what) {
  std::string options;
  for (size_t t = 0; t < f.types.size(); ++t) {
    const char* meaning = SampleTypeMeaning(f.types[t]);
    const std::string label = meaning ? meaning : f.types[t];
    options += "<option value=\"" + std::to_string(t) + "\">" + Html(label) + "</option>";
  }
  const std::string json = ScriptJson(FlameJson(f));
  char share[32];
  std::snprintf(share, sizeof share, "%.2g%%", 100 * f.fold_share);
  const bool diff = !f.base.empty();
  return Note(what +
              " Click a frame to zoom into it, and one above to zoom out; search marks the frames whose names "
              "match and sums their share; right-click or double-click a frame (or tick the box) for its callers and "
              "callees over "
              "the whole tree, its total under all its callers. Frames holding under " +
              std::string(share) + " of every value are folded into their callers (" + report::Count(f.folded) +
              (diff ? " frames); go tool pprof -diff_base on the two runs' profiles has them all."
                    : " frames); go tool pprof on convert's profile has them all.")) +
         "<div class=\"flame\"><div class=\"tools\" hidden><label>Show <select class=\"type\">" + options +
         "</select></label>" +
         (diff ? "<label>Width: <select class=\"side\"><option value=\"next\">the new run</option>"
                 "<option value=\"base\">the base run</option></select></label>"
               : "") +
         "<input type=\"search\" placeholder=\"Search frames (a regular expression)\">"
         "<label><input type=\"checkbox\" class=\"chain\" checked> one row for a chain of single callers</label>"
         "<label><input type=\"checkbox\" class=\"sandwich\"> callers and callees of the matches</label>"
         "<span class=\"match\"></span>"
         "<button type=\"button\">Reset</button></div><div class=\"graph\"></div><div class=\"info\"></div>"
         "<script type=\"application/json\">" +
         json + "</script></div>\n";
}

std::string Card(const std::string& key, const std::string& value, const std::string& title) {
  return "<div class=\"card\"><div class=\"k\">" + Html(key) + "</div><div class=\"v\" title=\"" +
         Html(title.empty() ? value : title) + "\">" + Html(value) + "</div></div>";
}

}  // namespace torch2pprof::report
