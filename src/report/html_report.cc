// analyze's report as one self-contained HTML page: the same tables as text and JSON
// (analysis_tables.cc), charts in inline SVG, and a few lines of script that sort,
// filter and unfold the tables. Nothing is fetched: it opens from disk, offline.
#include <algorithm>
#include <cstdio>

#include "report/analysis_tables.h"
#include "report/flame_graph.h"
#include "report/html_page.h"
#include "report/ranks_tables.h"
#include "report/snapshot_tables.h"
#include "report/svg_chart.h"
#include "report/timeline.h"
#include "torch2pprof/report.h"

namespace torch2pprof {

using namespace report;

namespace {

// Colors of the step parts, in kStepParts order (as torch-tb-profiler's overview).
const char* const kPartColors[std::size(kStepParts)] = {"#4e79a7", "#f28e2b", "#edc948", "#e15759",
                                                        "#76b7b2", "#b07aa1", "#59a14f", "#bab0ac"};

const char kStyle[] = R"css(
:root{--fg:#1d1d1f;--muted:#6b6b70;--line:#e3e3e8;--bg:#fff;--alt:#f6f7f9;--accent:#4e79a7}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header{padding:18px 28px 10px;border-bottom:1px solid var(--line)}
header h1{margin:0;font-size:20px}
header .file{color:var(--muted);word-break:break-all}
nav{position:sticky;top:0;z-index:2;background:var(--bg);border-bottom:1px solid var(--line);padding:6px 28px;display:flex;flex-wrap:wrap;gap:14px}
nav a{color:var(--accent);text-decoration:none}
main{max-width:1240px;padding:0 28px 40px}
section{margin-top:26px}
h2{font-size:17px;margin:0 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:16px 0 4px}
p.note{color:var(--muted);margin:4px 0 8px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:10px}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 12px;background:var(--alt);min-width:0}
.card .k{color:var(--muted);font-size:12px}
.card .v{font-size:16px;font-weight:600;overflow-wrap:anywhere}
svg.chart{width:100%;height:auto;display:block;max-width:1000px}
svg .tick,svg .legend,svg .value{font-size:11px;fill:var(--muted)}
svg .legend{font-size:12px;fill:var(--fg)}
svg .grid{stroke:var(--line);stroke-width:1}
svg .axis{stroke:#999;stroke-width:1}
svg .mark{stroke:#c9c9d1;stroke-dasharray:3 3}
svg .track{fill:var(--alt);stroke:var(--line)}
svg .bar{fill:var(--accent)}
svg .area{fill:rgba(78,121,167,.35);stroke:var(--accent);stroke-width:1}
svg .peak{fill:#e15759}
svg .peak-label{font-size:12px;fill:#e15759;font-weight:600}
.tbl{margin:6px 0 14px;max-width:100%;overflow-x:auto}
.tbl .tools{display:flex;gap:10px;align-items:center;margin:4px 0}
.tbl input{padding:3px 6px;border:1px solid var(--line);border-radius:4px;min-width:240px}
.tbl .count{color:var(--muted);font-size:12px}
table{border-collapse:collapse;font-size:13px}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);white-space:nowrap}
th{text-align:left;background:var(--alt);position:sticky;top:0}
.tbl.sortable th{cursor:pointer;user-select:none}
.tbl.sortable th:after{content:" \2195";color:#bbb}
.tbl.sortable th.asc:after{content:" \2191";color:var(--fg)}
.tbl.sortable th.desc:after{content:" \2193";color:var(--fg)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.name{max-width:560px;overflow:hidden;text-overflow:ellipsis}
tbody tr:nth-child(even){background:#fbfbfc}
tfoot td{font-weight:600;background:var(--alt)}
button.more{margin-top:6px;padding:3px 10px;border:1px solid var(--line);border-radius:4px;background:var(--alt);cursor:pointer}
ul.advice li{margin-bottom:6px}
.flame .tools{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin:4px 0 8px}
.flame .tools input[type=search]{padding:3px 6px;border:1px solid var(--line);border-radius:4px;min-width:260px}
.flame .tools .match{color:var(--muted);font-size:12px}
.flame .graph{position:relative;width:calc(100vw - 72px);overflow:hidden;border:1px solid var(--line);border-radius:4px;background:var(--alt)}
.flame .f{position:absolute;height:17px;line-height:17px;font-size:10.5px;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;letter-spacing:-.1px;padding:0 3px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;border-right:1px solid #fff;border-bottom:1px solid #fff;cursor:pointer;color:#1d1d1f}
.flame .f.hit{outline:2px solid #d62728;outline-offset:-2px;font-weight:600}
.flame .f.up{opacity:.55}
.flame .info{color:var(--muted);font-size:12px;min-height:18px;margin-top:4px;overflow-wrap:anywhere}
.timeline .tools{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin:4px 0 6px}
.timeline .legend{display:flex;flex-wrap:wrap;gap:10px;font-size:12px;color:var(--muted);margin:2px 0 6px}
.timeline .legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;border-radius:2px}
.timeline .view{position:relative;width:calc(100vw - 72px);border:1px solid var(--line);border-radius:4px;overflow:hidden;cursor:grab}
.timeline canvas{display:block;width:100%}
.timeline .info{color:var(--fg);font-size:12px;min-height:36px;margin-top:4px;overflow-wrap:anywhere;white-space:pre-line}
.sites .legend{display:flex;flex-wrap:wrap;gap:6px;margin:4px 0}
.sites .legend button{border:1px solid var(--line);background:var(--bg);border-radius:4px;padding:2px 6px;font-size:12px;cursor:pointer;max-width:420px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.sites .legend button.on{border-color:var(--fg)}
.sites .legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.sites .legend span{color:var(--muted)}
.sites svg .site{cursor:pointer;stroke:#fff;stroke-width:.3}
.sites svg .site.on{stroke:#1d1d1f;stroke-width:1.5}
.sites pre.stack{font-size:12px;background:var(--alt);padding:6px 10px;border-radius:4px;min-height:20px;white-space:pre-wrap;overflow-wrap:anywhere}
details summary{cursor:pointer;color:var(--accent)}
)css";

// Sorting, filtering and "show all" for the tables; the rows are all in the page, the
// ones past -top hidden until asked for. Errors are written on <body> for the tests.
const char kScript[] = R"js(
window.addEventListener("error", function (e) {
  document.body.dataset.errors = (document.body.dataset.errors || "") + e.message + ";";
});
document.querySelectorAll(".tbl.sortable").forEach(function (box) {
  var table = box.querySelector("table"), body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows), heads = table.tHead.rows[0].cells;
  var filter = box.querySelector("input"), more = box.querySelector("button.more");
  var count = box.querySelector(".count"), top = +box.dataset.top || rows.length;
  var limit = top, col = -1, asc = false;
  function key(r) {
    var td = r.cells[col];
    if (td.dataset.v === undefined) return td.textContent.toLowerCase();
    return td.dataset.v === "" ? -Infinity : parseFloat(td.dataset.v);
  }
  function render() {
    var q = filter.value.trim().toLowerCase(), order = rows;
    if (col >= 0) {
      order = rows.map(function (r, i) { return [key(r), i, r]; });
      order.sort(function (a, b) {
        var c = a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
        return (asc ? c : -c) || a[1] - b[1];
      });
      order = order.map(function (x) { return x[2]; });
    }
    var shown = 0, match = 0, frag = document.createDocumentFragment();
    order.forEach(function (r) {
      var ok = !q || r.cells[0].textContent.toLowerCase().indexOf(q) >= 0;
      if (ok) match++;
      r.hidden = !(ok && shown < limit);
      if (!r.hidden) shown++;
      frag.appendChild(r);
    });
    body.appendChild(frag);
    count.textContent = shown + " of " + match + (q ? " matching" : "") + " rows";
    more.hidden = shown >= match;
    more.textContent = "Show all " + match + " rows";
  }
  Array.prototype.forEach.call(heads, function (th, i) {
    th.addEventListener("click", function () {
      asc = col === i ? !asc : rows.length > 0 && rows[0].cells[i].dataset.v === undefined;
      col = i;
      Array.prototype.forEach.call(heads, function (h) { h.className = ""; });
      th.className = asc ? "asc" : "desc";
      render();
    });
  });
  filter.addEventListener("input", render);
  more.addEventListener("click", function () { limit = Infinity; render(); });
  box.querySelector(".tools").hidden = false;
  render();
});
document.querySelectorAll(".flame").forEach(function (box) {
  // The profile's call tree as an icicle: the root on top, each frame as wide as its
  // share of the chosen value. A click zooms into a frame (its ancestors stay above, to
  // click back up); search marks the frames whose names match and their share.
  var data = JSON.parse(box.querySelector("script").textContent);
  var graph = box.querySelector(".graph"), info = box.querySelector(".info");
  var select = box.querySelector("select.type"), search = box.querySelector("input");
  var match = box.querySelector(".match"), reset = box.querySelector("button"), chains = box.querySelector(".chain");
  var n = data.parent.length, kids = [];
  for (var i = 0; i < n; i++) kids.push([]);
  for (i = 1; i < n; i++) kids[data.parent[i]].push(i);
  kids.forEach(function (k) { k.sort(function (a, b) { return data.names[data.name[a]] < data.names[data.name[b]] ? -1 : 1; }); });
  var type = 0, root = 0, rowH = 18, maxRows = 160;
  function fmt(v) {
    var u = data.units[type];
    if (u === "nanoseconds") {
      return v >= 1e9 ? (v / 1e9).toFixed(2) + " s" : v >= 1e6 ? (v / 1e6).toFixed(2) + " ms" : v >= 1e3 ? (v / 1e3).toFixed(1) + " us" : v + " ns";
    }
    if (u === "bytes") {
      return v >= 1073741824 ? (v / 1073741824).toFixed(2) + " GiB" : v >= 1048576 ? (v / 1048576).toFixed(2) + " MiB" : v >= 1024 ? (v / 1024).toFixed(1) + " KiB" : v + " B";
    }
    return String(v);
  }
  function name(i) { return i === 0 ? "all" : data.names[data.name[i]]; }
  // As the tables write names: kernels without their argument lists, paths cut to …/a/b.py.
  function label(i) { return i === 0 ? "all" : (data.labels && data.labels[data.name[i]]) || data.names[data.name[i]]; }
  // pprof's -focus syntax (a regular expression, case-insensitive), else the plain text.
  function matcher(q) {
    if (!q) return null;
    try { var re = new RegExp(q, "i"); return function (s) { return re.test(s); }; }
    catch (e) { q = q.toLowerCase(); return function (s) { return s.toLowerCase().indexOf(q) >= 0; }; }
  }
  function hit(m, i) { return m && i !== 0 && (m(name(i)) || m(label(i))); }
  // A differential graph (compare): red where the new run spends more than the base, blue
  // less, deeper with the share of the change; grey where it is under 0.1% of the root.
  var side = box.querySelector("select.side");
  function values(t, other) { return data.base && (side.value === "base") !== !!other ? data.base[t] : data.total[t]; }
  function change(i) {
    var b = data.base[type][i], n = data.total[type][i];
    return fmt(b) + " \u2192 " + fmt(n) + " (" + (n >= b ? "+" : "\u2212") + fmt(Math.abs(n - b)) +
      (b ? ", " + (n >= b ? "+" : "") + (100 * (n - b) / b).toFixed(1) + "%" : ", new") + ")";
  }
  function color(i) {
    if (data.base) {
      var b = data.base[type][i], n = data.total[type][i], m = Math.max(b, n);
      var root = Math.max(data.base[type][0], data.total[type][0]);
      if (!m || Math.abs(n - b) < 0.001 * root) return "hsl(0,0%,86%)";
      var r = Math.min(Math.abs(n - b) / m, 1);
      return n > b ? "hsl(0,80%," + (88 - 38 * r) + "%)" : "hsl(215,80%," + (88 - 38 * r) + "%)";
    }
    var s = name(i), h = 0;
    for (var k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) >>> 0;
    if (/\.py:\d+$/.test(s)) return "hsl(" + (200 + h % 40) + ",60%," + (72 + h % 12) + "%)";
    if (/^\[/.test(s)) return "hsl(0,0%," + (78 + h % 10) + "%)";
    return "hsl(" + (20 + h % 40) + ",75%," + (68 + h % 14) + "%)";
  }
  // The sandwich: every frame matching the search (the outermost where one holds
  // another), merged into one row; above it their callers, merged by name up to the
  // root (the nearest caller first), below them their callees merged down. Its row is a
  // function's total over all its callers, as pprof's -peek gives it.
  var sandwich = box.querySelector(".sandwich");
  function merged(tot, roots, up) {
    var top = {label: "", title: "", v: 0, kids: {}, order: []};
    function child(node, i) {
      var key = name(i), c = node.kids[key];
      if (!c) { c = node.kids[key] = {label: label(i), title: name(i), v: 0, kids: {}, order: [], first: i}; node.order.push(c); }
      return c;
    }
    roots.forEach(function (r) {
      top.v += tot[r];
      if (up) {
        for (var a = data.parent[r], cur = top; a !== 0; a = data.parent[a]) { cur = child(cur, a); cur.v += tot[r]; }
      } else {
        (function down(i, cur) { kids[i].forEach(function (c) { if (tot[c] > 0) { var k = child(cur, c); k.v += tot[c]; down(c, k); } }); })(r, top);
      }
    });
    return top;
  }
  function depthOf(node) { var d = 0; node.order.forEach(function (c) { d = Math.max(d, 1 + depthOf(c)); }); return d; }
  function drawSandwich(tot, m) {
    var roots = [];
    (function find(i) { if (tot[i] > 0 && hit(m, i)) { roots.push(i); return; } kids[i].forEach(find); })(0);
    var callers = merged(tot, roots, true), callees = merged(tot, roots, false);
    var up = Math.min(depthOf(callers), maxRows), width = graph.clientWidth || 1000, frag = document.createDocumentFragment();
    var names = {};
    roots.forEach(function (r) { names[label(r)] = 1; });
    function div(node, x, w, row, text) {
      var d = document.createElement("div");
      d.className = "f";
      d.style.left = x + "px"; d.style.width = Math.max(w, 1) + "px"; d.style.top = row * rowH + "px";
      d.style.background = node.first !== undefined ? color(node.first) : "hsl(45,90%,70%)";
      d.textContent = w > 14 ? text : "";
      d.title = (node.title || text) + "\n" + fmt(node.v) + " (" + (callers.v ? (100 * node.v / callers.v).toFixed(1) : "0") + "% of the matches)";
      if (node.first !== undefined) d.dataset.name = node.title;
      frag.appendChild(d);
    }
    function lay(node, x, w, row, dir, depth) {
      if (depth > maxRows) return;
      var cx = x;
      node.order.forEach(function (c) {
        var cw = node.v ? w * c.v / node.v : 0;
        if (cw >= 1) { div(c, cx, cw, row + dir, c.label); lay(c, cx, cw, row + dir, dir, depth + 1); }
        cx += cw;
      });
    }
    div(callers, 0, width, up, roots.length + " frames matching: " + Object.keys(names).slice(0, 3).join(", ") + " \u2014 " + fmt(callers.v));
    lay(callers, 0, width, up, -1, 1);
    lay(callees, 0, width, up, 1, 1);
    graph.textContent = "";
    graph.appendChild(frag);
    var rows = up + 1 + Math.min(depthOf(callees), maxRows);
    graph.style.height = rows * rowH + 2 + "px";
    graph.dataset.root = "sandwich";
    graph.dataset.frames = graph.childNodes.length;
    graph.dataset.sandwich = callers.v;
    match.textContent = roots.length + " matching frames hold " + fmt(callers.v) + " (" + (tot[0] ? (100 * callers.v / tot[0]).toFixed(1) : "0") +
      "% of " + data.types[type] + "): their callers above, their callees below";
    info.textContent = "Click a caller or callee for its own sandwich.";
  }
  function draw() {
    var tot = values(type), q = search.value.trim(), m = matcher(q);
    if (m && sandwich && sandwich.checked) return drawSandwich(tot, m);
    var width = graph.clientWidth || 1000, frag = document.createDocumentFragment(), rows = 0;
    var path = [], hits = 0, hitSum = 0;
    for (var a = root; ; a = data.parent[a]) { path.unshift(a); if (a === 0) break; }
    function box(i, x, w, depth, up, chain) {
      var d = document.createElement("div");
      d.className = "f" + (up ? " up" : "");
      d.style.left = x + "px";
      d.style.width = Math.max(w, 1) + "px";
      d.style.top = depth * rowH + "px";
      d.style.background = color(i);
      d.textContent = w > 14 ? (chain ? chain.map(label).join(" \u203a ") : label(i)) : "";
      d.dataset.node = i;
      if (chain) d.dataset.zoom = chain[chain.length - 1];
      var share = tot[0] ? (100 * tot[i] / tot[0]).toFixed(2) : "0";
      d.title = (chain ? chain.map(name).join("\n") : name(i)) + "\n" + (data.base ? change(i) + "\n" : "") + fmt(tot[i]) + " (" + share + "% of all" +
        (i ? ", " + (tot[data.parent[i]] ? (100 * tot[i] / tot[data.parent[i]]).toFixed(1) : "0") + "% of its caller" : "") + ")";
      if (hit(m, i)) d.className += " hit";
      frag.appendChild(d);
      rows = Math.max(rows, depth + 1);
    }
    path.forEach(function (a, depth) { if (a !== root) box(a, 0, width, depth, true); });
    var base = path.length - 1;
    function walk(i, x, w, depth) {
      if (w < 1 || depth - base >= maxRows) return;
      box(i, x, w, depth, false);
      var cx = x;
      kids[i].forEach(function (c) {
        var cw = tot[root] ? w * tot[c] / tot[i] : 0;
        if (tot[c] > 0) walk(c, cx, cw, depth + 1);
        cx += cw;
      });
    }
    if (m) {  // every match in the tree holding some of this value, drawn or not; one nested in another counts once
      (function count(i, under) {
        var h = tot[i] > 0 && hit(m, i);
        if (h && !under) { hits++; hitSum += tot[i]; }
        kids[i].forEach(function (c) { count(c, under || h); });
      })(0, false);
    }
    // From the frame shown at the top down to the first branch, a chain of frames with
    // one caller each (all -> <module> -> train -> ProfilerStep -> ...) is one row.
    var chain = [root];
    if (chains && chains.checked) {
      for (;;) {
        var live = kids[chain[chain.length - 1]].filter(function (c) { return tot[c] > 0; });
        if (live.length !== 1 || tot[live[0]] !== tot[chain[chain.length - 1]]) break;
        chain.push(live[0]);
      }
    }
    if (chain.length > 1) {
      var last = chain[chain.length - 1], cx = 0;
      box(root, 0, width, base, false, chain);
      kids[last].forEach(function (c) {
        var cw = tot[last] ? width * tot[c] / tot[last] : 0;
        if (tot[c] > 0) walk(c, cx, cw, base + 1);
        cx += cw;
      });
    } else {
      walk(root, 0, width, base);
    }
    graph.textContent = "";
    graph.appendChild(frag);
    graph.style.height = rows * rowH + 2 + "px";
    graph.dataset.root = root;
    graph.dataset.frames = graph.childNodes.length;
    match.textContent = q ? hits + " matching frames hold " + fmt(hitSum) + " (" +
      (tot[0] ? (100 * hitSum / tot[0]).toFixed(1) : "0") + "% of " + data.types[type] + ")" : "";
    info.textContent = label(root) + ": " + fmt(tot[root]) + " of " + fmt(tot[0]) + " " + data.types[type] +
      (data.base ? "; base \u2192 new: " + change(root) : "");
  }
  function exactly(text) { return "^" + text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$"; }
  // A second click within 400 ms (a double click; the first one has redrawn the graph,
  // so the browser sees no dblclick): the sandwich of the frame first clicked, all its
  // callers and callees.
  var last = {t: 0, node: -1, root: 0};
  graph.addEventListener("click", function (e) {
    var d = e.target.closest(".f");
    if (!d) return;
    if (graph.dataset.root === "sandwich") {
      if (d.dataset.name) { search.value = exactly(d.dataset.name); draw(); }
      return;
    }
    var now = Date.now();
    if (sandwich && now - last.t < 400) {  // the frame first clicked: the redraw may have moved it
      root = last.root;
      search.value = exactly(name(last.node));
      sandwich.checked = true;
      last.t = 0;
      draw();
      return;
    }
    last = {t: now, node: +d.dataset.node, root: root};
    root = +(d.dataset.zoom || d.dataset.node);
    draw();
  });
  // A right click: the same, at once (no timing to meet).
  graph.addEventListener("contextmenu", function (e) {
    var d = e.target.closest(".f");
    if (!d || !sandwich || graph.dataset.root === "sandwich") return;
    e.preventDefault();
    search.value = exactly(name(+d.dataset.node));
    sandwich.checked = true;
    draw();
  });
  if (sandwich) sandwich.addEventListener("change", draw);
  select.addEventListener("change", function () { type = +select.value; root = 0; draw(); });
  if (side) side.addEventListener("change", draw);
  search.addEventListener("input", draw);
  if (chains) chains.addEventListener("change", draw);
  reset.addEventListener("click", function () { root = 0; search.value = ""; draw(); });
  // Links elsewhere on the page to a frame under the root ("rank 2"): zoom there.
  document.querySelectorAll("a.flame-root").forEach(function (a) {
    a.addEventListener("click", function () {
      kids[0].forEach(function (c) { if (name(c) === a.dataset.frame) root = c; });
      if (sandwich) sandwich.checked = false;
      draw();
    });
  });
  box.querySelector(".tools").hidden = false;
  draw();
});
document.querySelectorAll(".timeline").forEach(function (box) {
  // One step at a time on a canvas: a lane per thread and stream (nested calls in rows),
  // the critical path on a lane of its own and drawn over the lanes it crosses, the
  // streams' gaps shaded by cause. Wheel or the buttons zoom, a drag pans, a click on a
  // lane's name shows all its rows; hovering names what is under the pointer.
  var data = JSON.parse(box.querySelector("script").textContent);
  var select = box.querySelector("select"), view = box.querySelector(".view"), canvas = box.querySelector("canvas");
  var info = box.querySelector(".info"), scope = box.querySelector(".scope"), ctx = canvas.getContext("2d");
  var LABEL = 200, ROW = 14, RULER = 18, CRIT = 16, MAXROWS = 6;
  var bound = ["#edc948", "#f28e2b", "#b07aa1", "#4e79a7", "#59a14f", "#ff9da7"];
  var cause = ["rgba(225,87,89,.30)", "rgba(237,201,72,.40)", "rgba(160,160,160,.28)"];
  var s, v0, v1, lanes, total, index, expanded = {}, drag = null, W = 1000;
  function fmt(ns) {
    var a = Math.abs(ns);
    return a >= 1e9 ? (ns / 1e9).toFixed(3) + " s" : a >= 1e6 ? (ns / 1e6).toFixed(3) + " ms" : a >= 1e3 ? (ns / 1e3).toFixed(1) + " us" : ns + " ns";
  }
  function label(n) { return (s.labels[n] || s.names[n]) || "(no event open)"; }
  function load(i) {
    s = data.steps[i]; v0 = 0; v1 = s.length; expanded = {};
    // bars by (lane, depth): their first index, for the hit test's search
    index = {};
    for (var k = 0; k < s.bars.length; k += 6) {
      var key = s.bars[k] + ":" + s.bars[k + 1];
      if (!(key in index)) index[key] = [k, k];
      index[key][1] = k + 6;
    }
    box.dataset.step = s.step;
    scope.textContent = s.step + ": " + fmt(s.length) + ", " + s.events + " events on " + s.lanes.length + " lanes" +
      (s.merged ? "; " + s.merged + " events too short to see at the closest zoom are drawn merged, a bar that says how many" : "");
    layout(); draw();
  }
  function layout() {
    var y = RULER + CRIT + 6; lanes = [];
    s.lanes.forEach(function (l, i) {
      var rows = Math.max(1, expanded[i] ? l[2] : Math.min(l[2], MAXROWS));
      lanes.push({y: y, rows: rows, h: rows * ROW + 6});
      y += rows * ROW + 6;
    });
    total = y;
  }
  function X(t) { return LABEL + (t - v0) / (v1 - v0) * (W - LABEL); }
  function T(x) { return v0 + (x - LABEL) / (W - LABEL) * (v1 - v0); }
  function color(n, device) {
    var str = s.names[n], h = 0;
    for (var k = 0; k < str.length; k++) h = (h * 31 + str.charCodeAt(k)) >>> 0;
    return device ? "hsl(" + (20 + h % 35) + ",75%," + (62 + h % 14) + "%)" : "hsl(" + (200 + h % 40) + ",55%," + (68 + h % 14) + "%)";
  }
  function text(str, x, y, w) {
    if (w < 24) return;
    var n = Math.floor((w - 4) / 6);
    ctx.fillText(str.length > n ? str.slice(0, Math.max(n - 1, 1)) + "\u2026" : str, x + 2, y);
  }
  function draw() {
    W = view.clientWidth || 1000;
    var dpr = window.devicePixelRatio || 1;
    canvas.width = W * dpr; canvas.height = total * dpr; canvas.style.height = total + "px";
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, total);
    ctx.font = "10.5px system-ui, sans-serif"; ctx.textBaseline = "middle";
    var drawn = 0, crossings = 0;
    // the ruler: ticks at a round step of time
    var span = v1 - v0, tick = Math.pow(10, Math.floor(Math.log10(span / 8)));
    if (span / tick > 16) tick *= 5; else if (span / tick > 8) tick *= 2;
    ctx.fillStyle = "#6b6b70";
    for (var t = Math.ceil(v0 / tick) * tick; t <= v1; t += tick) {
      ctx.fillRect(X(t), 0, 1, RULER - 4); ctx.fillText(fmt(t), X(t) + 3, 7);
    }
    ctx.fillStyle = "#1d1d1f"; ctx.fillText("critical path", 6, RULER + CRIT / 2);
    lanes.forEach(function (L, i) {
      ctx.fillStyle = i % 2 ? "#fbfbfc" : "#f3f4f7"; ctx.fillRect(0, L.y - 3, W, L.h);
      ctx.fillStyle = "#1d1d1f";
      var l = s.lanes[i], more = l[2] > L.rows ? " [+" + (l[2] - L.rows) + "]" : "";
      text(l[0] + more, 2, L.y + ROW / 2, LABEL - 6);
    });
    ctx.save(); ctx.beginPath(); ctx.rect(LABEL, 0, W - LABEL, total); ctx.clip();
    for (var k = 0; k < s.gaps.length; k += 5) {
      if (s.gaps[k + 2] < v0 || s.gaps[k + 1] > v1) continue;
      var L = lanes[s.gaps[k]], x = X(s.gaps[k + 1]);
      ctx.fillStyle = cause[s.gaps[k + 3]]; ctx.fillRect(x, L.y - 3, Math.max(X(s.gaps[k + 2]) - x, 1), L.h);
    }
    for (k = 0; k < s.bars.length; k += 6) {
      var b = s.bars, L2 = lanes[b[k]];
      if (b[k + 3] < v0 || b[k + 2] > v1 || b[k + 1] >= L2.rows) continue;
      var x0 = X(b[k + 2]), w = Math.max(X(b[k + 3]) - x0, 1), y = L2.y + b[k + 1] * ROW;
      ctx.fillStyle = b[k + 5] > 1 ? "#c9ccd3" : color(b[k + 4], s.lanes[b[k]][1]);
      ctx.fillRect(x0, y, w, ROW - 1);
      ctx.fillStyle = "#1d1d1f";
      text(b[k + 5] > 1 ? b[k + 5] + " events" : label(b[k + 4]), x0, y + ROW / 2, w);
      drawn++;
    }
    // the critical path: its lane, coloured by what bounds it, then a line over the lanes
    // (a crossing drawn within 3 px of the last one would only thicken it)
    var c = s.critical, prev = null, lastX = -10;
    for (k = 0; k < c.length; k += 6) {
      if (c[k + 2] < v0 || c[k + 1] > v1) { prev = null; continue; }
      var a = X(c[k + 1]), e = Math.max(X(c[k + 2]), a + 1), ly = lanes[c[k]].y - 2;
      ctx.fillStyle = bound[c[k + 3]]; ctx.fillRect(a, RULER, e - a, CRIT);
      ctx.fillStyle = "#d62728"; ctx.fillRect(a, ly, e - a, 3);
      if (prev !== null && prev !== c[k]) {
        crossings++;
        if (a - lastX >= 3) {
          ctx.globalAlpha = 0.7;
          ctx.fillRect(a, Math.min(ly, lanes[prev].y - 2), 1, Math.abs(ly - lanes[prev].y + 2) + 3);
          ctx.globalAlpha = 1; lastX = a;
        }
      }
      prev = c[k];
    }
    ctx.restore();
    view.dataset.drawn = drawn; view.dataset.crossings = crossings;
    view.dataset.view = Math.round(v0) + "-" + Math.round(v1);
  }
  // What is under (x, y): a bar, a gap, a stretch of the critical path.
  function at(x, y) {
    var t = T(x), k;
    if (y >= RULER && y < RULER + CRIT) {
      if (x < LABEL) return null;
      for (k = 0; k < s.critical.length; k += 6) if (s.critical[k + 1] <= t && t < s.critical[k + 2]) return {kind: "critical", k: k};
      return null;
    }
    for (var i = 0; i < lanes.length; i++) {
      var L = lanes[i];
      if (y < L.y - 3 || y >= L.y - 3 + L.h) continue;
      if (x < LABEL) return {kind: "lane", i: i};
      var depth = Math.floor((y - L.y) / ROW), r = index[i + ":" + depth], slop = 3 * (v1 - v0) / (W - LABEL);
      if (r && depth >= 0) {
        var lo = r[0] / 6, hi = r[1] / 6;  // the last bar starting at or before t + slop
        while (lo < hi) { var mid = (lo + hi) >> 1; if (s.bars[mid * 6 + 2] <= t + slop) lo = mid + 1; else hi = mid; }
        for (k = (lo - 1) * 6; k >= r[0] && k > (lo - 4) * 6; k -= 6) if (s.bars[k + 3] >= t - slop) return {kind: "bar", k: k};
      }
      for (k = 0; k < s.gaps.length; k += 5) if (s.gaps[k] === i && s.gaps[k + 1] <= t && t < s.gaps[k + 2]) return {kind: "gap", k: k};
      return {kind: "lane", i: i};
    }
    return null;
  }
  function describe(h) {
    if (!h) return "";
    var k = h.k, b = s.bars, g = s.gaps, c = s.critical;
    if (h.kind === "bar") {
      return (b[k + 5] > 1 ? b[k + 5] + " events too short to draw, the longest " + s.names[b[k + 4]] : s.names[b[k + 4]]) +
        "\n" + fmt(b[k + 3] - b[k + 2]) + " at " + fmt(b[k + 2]) + " on " + s.lanes[b[k]][0];
    }
    if (h.kind === "gap") {
      return s.lanes[g[k]][0] + " idle " + fmt(g[k + 2] - g[k + 1]) + " at " + fmt(g[k + 1]) + ": " + data.causes[g[k + 3]] +
        (g[k + 4] ? "\nthe critical path was in " + s.names[g[k + 4]] : "");
    }
    if (h.kind === "critical") {
      return "critical path: " + data.bounds[c[k + 3]] + ", " + fmt(c[k + 2] - c[k + 1]) + " at " + fmt(c[k + 1]) + " on " +
        s.lanes[c[k]][0] + "\n" + (c[k + 5] > 1 ? c[k + 5] + " stretches, the longest in " : "in ") + (c[k + 4] ? s.names[c[k + 4]] : "(no event open on the thread)");
    }
    return s.lanes[h.i][0] + (s.lanes[h.i][2] > lanes[h.i].rows ? ": click its name for all " + s.lanes[h.i][2] + " rows" : "");
  }
  function zoom(f, t) {
    var min = Math.max(s.length / 40000 * 50, 1000), span = Math.min(Math.max((v1 - v0) * f, min), s.length);
    v0 = Math.min(Math.max(t - (t - v0) * span / (v1 - v0), 0), s.length - span); v1 = v0 + span; draw();
  }
  function pos(e) { var r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
  canvas.addEventListener("wheel", function (e) {
    var p = pos(e); if (p[0] < LABEL) return;
    e.preventDefault(); zoom(Math.exp(e.deltaY * 0.002), T(p[0]));
  }, {passive: false});
  canvas.addEventListener("mousedown", function (e) { var p = pos(e); drag = {x: p[0], v0: v0, moved: false}; });
  window.addEventListener("mouseup", function () { setTimeout(function () { drag = null; }, 0); });
  canvas.addEventListener("mousemove", function (e) {
    var p = pos(e);
    if (drag && e.buttons === 1 && p[0] >= LABEL) {
      var d = (p[0] - drag.x) / (W - LABEL) * (v1 - v0);
      if (Math.abs(p[0] - drag.x) > 2) drag.moved = true;
      var span = v1 - v0; v0 = Math.min(Math.max(drag.v0 - d, 0), s.length - span); v1 = v0 + span; draw(); return;
    }
    info.textContent = describe(at(p[0], p[1]));
  });
  canvas.addEventListener("click", function (e) {
    var p = pos(e);
    if (drag && drag.moved) return;
    var h = at(p[0], p[1]);
    if (h && h.kind === "lane" && p[0] < LABEL) { expanded[h.i] = !expanded[h.i]; layout(); draw(); }
    info.textContent = describe(h);
  });
  box.querySelectorAll("button").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var f = btn.dataset.zoom;
      if (f === "reset") { v0 = 0; v1 = s.length; draw(); } else zoom(+f, (v0 + v1) / 2);
    });
  });
  select.addEventListener("change", function () { load(+select.value); });
  window.addEventListener("resize", function () { draw(); });
  box.querySelector(".tools").hidden = false;
  load(0);
});
document.querySelectorAll(".sites").forEach(function (box) {
  // A site's band or name, clicked: it is outlined and the stack of its largest
  // allocation is shown (innermost frame first, as _memory_viz lists it).
  var data = JSON.parse(box.querySelector("script").textContent), out = box.querySelector("pre.stack");
  function show(i) {
    box.querySelectorAll(".on").forEach(function (e) { e.classList.remove("on"); });
    box.querySelectorAll('[data-i="' + i + '"]').forEach(function (e) { e.classList.add("on"); });
    var s = data[i];
    out.textContent = s.site + "\n" + (s.stack.length ? s.stack.join("\n") : "(no stack recorded)");
    box.dataset.shown = i;
  }
  box.querySelectorAll("[data-i]").forEach(function (e) {
    e.addEventListener("click", function () { show(+e.dataset.i); });
  });
});
document.body.dataset.ready = "1";
)js";

// The slowest steps as timelines (Analysis::timelines), one at a time: the data as JSON
// for the script, which draws it on a canvas.
std::string TimelineBody(const Analysis& a) {
  static const char* const kBoundColors[kBounds] = {"#edc948", "#f28e2b", "#b07aa1", "#4e79a7", "#59a14f", "#ff9da7"};
  static const char* const kCauseColors[] = {"rgba(225,87,89,.30)", "rgba(237,201,72,.40)", "rgba(160,160,160,.28)"};
  std::string options;
  for (size_t i = 0; i < a.timelines.size(); ++i) {
    const StepTimeline& t = a.timelines[i];
    options += "<option value=\"" + std::to_string(i) + "\">" + Html(t.step + ": " + FormatDuration(t.length_ns)) +
               (i == 0 ? " (the slowest)" : "") + "</option>";
  }
  std::string legend = "<span>critical path, bound by:</span>";
  for (int b = 0; b < kBounds; ++b) {
    legend +=
        "<span><i style=\"background:" + std::string(kBoundColors[b]) + "\"></i>" + Html(kBoundWords[b]) + "</span>";
  }
  legend += "<span>a stream idle:</span>";
  for (size_t c = 0; c < std::size(kIdleCauseNames); ++c) {
    legend += "<span><i style=\"background:" + std::string(kCauseColors[c]) + "\"></i>" + Html(kIdleCauseNames[c]) +
              "</span>";
  }
  const size_t shown = a.timelines.size(), steps = a.steps.size();
  return Note((shown < steps ? "The " + Count(shown) + " slowest of " + Count(steps) + " analysed steps"
                             : std::string(shown == 1 ? "The analysed step" : "The analysed steps, slowest first")) +
              ", each on its own clock. A lane per thread and stream, nested calls in rows (click a lane's name for "
              "all its rows); the red line is the critical path, what the step waited on, and the lane above it "
              "says what bound each stretch. Shaded gaps are a stream's idle time, by the idle table's causes. "
              "Scroll to zoom, drag to pan; hover for names. analyze --timeline OUT.json writes every event with "
              "the critical path for Perfetto.") +
         "<div class=\"timeline\"><div class=\"tools\" hidden><label>Step <select>" + options +
         "</select></label><button type=\"button\" data-zoom=\"0.5\">Zoom in</button>"
         "<button type=\"button\" data-zoom=\"2\">Zoom out</button>"
         "<button type=\"button\" data-zoom=\"reset\">Whole step</button><span class=\"scope\"></span></div>"
         "<div class=\"legend\">" +
         legend + "</div><div class=\"view\"><canvas></canvas></div><div class=\"info\"></div>" +
         "<script type=\"application/json\">" + ScriptJson(TimelineJson(a)) + "</script></div>\n";
}

// A bar a step up to this many in the step chart (the table has them all).
constexpr size_t kChartSteps = 1000;

std::string Overview(const Analysis& a) {
  const TraceOverview& t = a.trace;
  std::string cards;
  cards += Card("Span", FormatDuration(t.span_ns));
  if (t.wall_clock_ns) cards += Card("Started", WallClock(t.wall_clock_ns));
  int64_t steps_total = 0;
  for (const StepRow& s : a.steps) steps_total += s.total_ns;
  if (!a.steps.empty()) {
    cards += Card(a.whole_trace_step ? "Steps (none: whole trace)" : "Steps analysed",
                  std::to_string(a.steps.size()) + " of " + std::to_string(t.profiler_steps));
    cards += Card("Mean step time", FormatDuration(steps_total / static_cast<int64_t>(a.steps.size())));
  }
  for (const GpuRow& g : a.gpu) {
    cards += Card("GPU utilization " + g.device, g.window_ns > 0 ? PercentOf(g.utilization()) : "-");
  }
  for (const MemoryRow& m : a.memory) {
    if (m.peak_bytes >= kSmallMemory) cards += Card("Peak memory " + m.device, Bytes(m.peak_bytes));
  }
  cards += Card("Events", Count(t.events));
  size_t cpu = 0, dev = 0;
  for (const LaneInfo& l : t.lanes) (l.device ? dev : cpu)++;
  cards += Card("Lanes", std::to_string(cpu) + " CPU, " + std::to_string(dev) + " device");
  for (const DeviceInfo& d : t.devices) {
    cards += Card("Device " + (d.device.empty() ? std::to_string(d.id) : d.device), d.name);
  }
  if (t.rank >= 0) {
    cards += Card("Rank", std::to_string(t.rank) + (t.world_size > 0 ? " of " + std::to_string(t.world_size) : "") +
                              (t.backend.empty() ? "" : " (" + t.backend + ")"));
  }
  std::string out = "<div class=\"cards\">" + cards + "</div>\n";
  std::string skipped;
  for (const auto& [k, n] : t.skipped) skipped += (skipped.empty() ? "" : ", ") + k + " " + Count(n);
  if (!skipped.empty()) out += Note("Events without time, skipped: " + skipped);
  out += "<details><summary>Lanes (" + std::to_string(t.lanes.size()) + ")</summary><div class=\"tbl\"><table>";
  out += "<thead><tr><th>pid/tid</th><th>thread</th><th>kind</th><th>intervals</th><th>busy</th></tr></thead><tbody>";
  for (const LaneInfo& l : t.lanes) {
    out += "<tr><td>" + Html(l.pid + "/" + l.tid) + "</td><td>" + Html(l.name) + "</td><td>" +
           (l.device ? "device" : "cpu") + "</td><td class=\"num\">" + Count(l.intervals) + "</td><td class=\"num\">" +
           FormatDuration(l.busy_ns) + "</td></tr>";
  }
  return out + "</tbody></table></div></details>\n";
}

std::string StepLabel(const std::string& name, size_t i) {
  size_t hash = name.rfind('#');
  return hash != std::string::npos && hash + 1 < name.size() ? "#" + name.substr(hash + 1) : std::to_string(i);
}

std::string Steps(const Analysis& a, int top) {
  if (a.steps.empty()) return Note("(no steps)");
  std::vector<std::string> labels;
  std::vector<ChartSeries> series;
  std::vector<std::vector<int64_t>> values;
  for (size_t k = 0; k < std::size(kStepParts); ++k) series.push_back({kStepParts[k].key, kPartColors[k]});
  // A bar a step up to kChartSteps: past that the bars are thinner than a pixel and the page
  // grows by a rectangle per part and step (50,000 steps made 33 MB); the table has them all.
  const size_t charted = std::min(a.steps.size(), kChartSteps);
  for (size_t i = 0; i < charted; ++i) {
    labels.push_back(StepLabel(a.steps[i].name, i));
    values.emplace_back();
    for (const StepPart& p : kStepParts) values.back().push_back(a.steps[i].*p.field);
  }
  std::string out = a.whole_trace_step ? Note("No ProfilerStep in the trace: the whole trace is one step.") : "";
  out += StackedBars(labels, series, values);
  if (charted < a.steps.size()) {
    out += Note("The chart shows the first " + report::Count(charted) + " of " + report::Count(a.steps.size()) +
                " steps; the table below, --format json and csv have every step.");
  }
  out += Note(
      "Each step's time split into the parts torch-tb-profiler shows, in the order they claim time "
      "(kernel first); the parts sum to the step's time.");
  out += HtmlTable("steps-table", StepsTable(a), top, true);
  if (!a.critical_path.empty()) {
    // What each step waited on, one line a step, then the table with every category.
    out += Note(
        "What each step waited on: its critical path, walked back from the step's end through launches, "
        "stream order and synchronizations; every nanosecond to one event, in HTA's categories.");
    out += "<ul class=\"bound-by\">";
    const size_t listed = std::min(a.critical_path.size(), kHtmlRows);  // as the tables are
    for (size_t i = 0; i < listed; ++i) {
      const CriticalStep& c = a.critical_path[i];
      const int b = static_cast<int>(c.bound_by());
      std::string line = Html(c.step) + ": bound by <b>" + c.bound_words() + "</b> " +
                         Html(Percent(c.bound_ns[b], c.length_ns)) + " of " + Html(FormatDuration(c.length_ns)) + " (" +
                         kBoundNames[b] + ")";
      if (c.most.ns > 0) {
        const std::string& name = a.critical_names[c.most.name];
        const std::string& where = a.critical_names[c.most.where];
        line += "; most in " + Html(name) + (where.empty() || where == name ? "" : " (" + Html(where) + ")");
      }
      out += "<li>" + line + "</li>";
    }
    out += "</ul>";
    if (listed < a.critical_path.size()) {
      out += Note("The first " + report::Count(listed) + " of " + report::Count(a.critical_path.size()) +
                  " steps; --format json and csv have every step.");
    }
    out += HtmlTable("critical-table", CriticalPathTable(a), top, true);
  }
  return out;
}

std::string Gpu(const Analysis& a, int top) {
  if (a.gpu.empty()) return Note("(no device activity)");
  std::vector<ShareBar> bars;
  for (const GpuRow& g : a.gpu) {
    bars.push_back({g.device, g.window_kernel_ns, g.window_ns,
                    "kernels " + FormatDuration(g.window_kernel_ns) + " of " + FormatDuration(g.window_ns)});
  }
  return Note(
             "Utilization: the share of the steps' window (first step start to last step end) in which the device "
             "ran at least one kernel.") +
         ShareBars(bars) + HtmlTable("gpu-table", GpusTable(a), top, false);
}

// Each stream's idle time between its work, by cause, beside the step breakdown.
std::string Idle(const Analysis& a, int top) {
  if (a.idle_time.empty()) return Note("(no device work)");
  std::vector<std::string> labels;
  const std::vector<ChartSeries> series = {{"host wait", "#e15759"}, {"kernel wait", "#edc948"}, {"other", "#bab0ac"}};
  std::vector<std::vector<int64_t>> values;
  for (const IdleRow& r : a.idle_time) {
    labels.push_back(r.device + " " + StreamName(r.stream));
    values.push_back({r.host_wait_ns, r.kernel_wait_ns, r.other_ns});
  }
  std::string out = Note(
      "Time a stream sat idle between its work, as HTA's idle time breakdown splits it: host wait when the next "
      "work's launch call began after the stream went idle (the CPU was late), kernel wait for gaps under 30 us "
      "(back-to-back launch overhead), other for the rest.");
  out += StackedBars(labels, series, values) + HtmlTable("idle-table", IdleTimeTable(a), top, false);
  if (a.kernel_launches.count > 0) {
    const std::vector<LaunchRow> rows = LaunchRows(a.kernel_launches);
    out += "<h3>Kernel launches</h3>\n" +
           Note(
               "Each launch call (cudaLaunchKernel and the like) to its device work: the call's time, the work's, "
               "and the delay from the call's end to the work's start (HTA's launch statistics).") +
           HtmlTable("launches-table", LaunchesTable(rows), 0, false);
    out += "<h3>Launch queue per stream</h3>\n" +
           Note("Work launched and not yet started on each stream (HTA's queue length), over the changes.") +
           HtmlTable("queue-table", QueueLengthTable(a), top, false);
  }
  return out;
}

// Allocated bytes by site over time (SiteSeries, parallel to `spans`), stacked, at most
// kColumns wide: a column is the span of its stretch with the highest total, as the
// timelines keep the highest level. A click on a site (or its legend) shows its stack,
// where it has one.
std::string SitesOverTime(const std::vector<SiteSeries>& series, const std::vector<AreaPoint>& all, int64_t origin_ns,
                          int64_t peak_ns, int64_t peak, const std::string& note) {
  static const char* const kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                        "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8"};
  constexpr size_t kColumns = 600;
  const size_t n = all.size();
  if (series.empty() || n == 0) return "";
  std::vector<size_t> pick;  // the span each column shows
  std::vector<AreaPoint> spans;
  for (size_t i = 0; i < n; ++i) {
    const size_t column = i * kColumns / n;
    if (pick.size() <= column) {
      pick.push_back(i);
      spans.push_back({all[i].start_ns, all[i].end_ns, 0});
    } else {
      if (all[i].value > all[pick.back()].value) pick.back() = i;
      spans.back().end_ns = all[i].end_ns;
    }
  }
  // What was allocated before the window or the trace (weights, optimizer state) at the
  // bottom, as it lies under everything the window allocates.
  std::vector<const SiteSeries*> order;
  for (int base = 1; base >= 0; --base) {
    for (const SiteSeries& s : series) {
      if ((s.site == kBeforeWindow || s.site == kBeforeTrace) == (base == 1)) order.push_back(&s);
    }
  }
  std::vector<StackSeries> stacked;
  std::string legend, json = "[";
  for (size_t j = 0; j < order.size(); ++j) {
    const SiteSeries& s = *order[j];
    const bool other = s.site == kOtherSites, before = s.site == kBeforeWindow || s.site == kBeforeTrace;
    const std::string color = other ? "#c9ccd3" : before ? "#e3e3e8" : kColors[j % std::size(kColors)];
    StackSeries x;
    x.color = color;
    x.title = s.site + ": " + Bytes(s.peak_bytes) + " at the peak";
    for (const size_t i : pick) x.values.push_back(s.bytes[i]);
    stacked.push_back(std::move(x));
    legend += "<button type=\"button\" data-i=\"" + std::to_string(j) + "\"><i style=\"background:" + color +
              "\"></i>" + Html(FrameLabel(s.site)) + " <span>" + Html(Bytes(s.peak_bytes)) + "</span></button>";
    Json site;
    site.String(s.site);
    json += (j ? ",{" : "{") + std::string("\"site\":") + site.out + ",\"peak\":" + std::to_string(s.peak_bytes) +
            ",\"stack\":[";
    for (size_t k = 0; k < s.stack.size(); ++k) {
      Json frame;
      frame.String(FrameLabel(s.stack[k]));  // as the tables write names
      json += (k ? "," : "") + frame.out;
    }
    json += "]}";
  }
  json += "]";
  return "<div class=\"sites\">" + Note(note) + StackedBytesOverTime(spans, stacked, origin_ns, peak_ns, peak) +
         "<div class=\"legend\">" + legend + "</div><pre class=\"stack\"></pre><script type=\"application/json\">" +
         ScriptJson(json) + "</script></div>\n";
}

// A snapshot device's, over the ring's window.
std::string SitesOverTime(const SnapshotDevice& d) {
  std::vector<AreaPoint> all;
  for (size_t i = 0; i < d.timeline.size(); ++i) {
    const int64_t start = d.timeline[i].time_us * 1000;
    const int64_t end = i + 1 < d.timeline.size() ? d.timeline[i + 1].time_us * 1000 : start + 1000;
    all.push_back({start, std::max(end, start + 1), d.timeline[i].allocated_bytes});
  }
  if (all.empty()) return "";
  return SitesOverTime(d.site_timeline, all, all.front().start_ns, d.peak_time_us * 1000, d.peak_bytes,
                       "Allocated bytes by the code that allocated them (the peak table's sites; the " +
                           std::to_string(kSiteSeries) +
                           " holding most at the peak, then the others together, then what was allocated before the "
                           "window), stacked over the window as torch's _memory_viz Active Memory Timeline stacks "
                           "them. Click a band or a name for the stack of its largest allocation.");
}

std::string Memory(const Analysis& a, int top) {
  if (a.memory.empty()) return Note("(no [memory] events: profile with profile_memory=True)");
  std::vector<int64_t> marks;
  for (const StepRow& s : a.steps) marks.push_back(s.start_ns);
  std::string out = Note("Allocated bytes over time, from the trace start; dashed lines are step starts.") +
                    HtmlTable("memory-table", MemoryTable(a, top), top, false);
  for (const MemoryRow& m : a.memory) {
    out += "<h3>" + Html(m.device) + ": peak " + Html(Bytes(m.peak_bytes)) + " at +" +
           Html(FormatDuration(m.peak_ns - a.trace.start_ns)) +
           (m.from_totals ? " (Total Allocated)" : " (running sum of Bytes)") + "</h3>\n";
    if (m.peak_bytes < kSmallMemory) continue;  // a few scalars: the heading says it all
    std::vector<AreaPoint> points;
    for (const MemoryBucket& b : m.timeline) points.push_back({b.start_ns, b.end_ns, b.max_bytes});
    out += BytesOverTime(points, a.trace.start_ns, m.peak_ns, m.peak_bytes, marks);
    out +=
        SitesOverTime(m.site_timeline, points, a.trace.start_ns, m.peak_ns, m.peak_bytes,
                      "The same by the operator that allocated (the table below; the " + std::to_string(kSiteSeries) +
                          " holding most at the peak, then the others together, then what was allocated before "
                          "the trace), stacked. Click a band or a name to mark it.");
    if (m.before_trace_bytes > 0) {
      out += Note(Bytes(m.before_trace_bytes) +
                  " of the peak was allocated before the trace began (weights, optimizer state): no operator in the "
                  "trace holds it.");
    }
    if (!m.top_operators.empty()) {
      out +=
          "<div class=\"tbl\"><table><thead><tr><th>operator</th><th>live at peak</th><th>allocations</th>"
          "<th>allocated in the trace</th></tr></thead><tbody>";
      for (size_t i = 0; i < std::min<size_t>(m.top_operators.size(), 10); ++i) {
        const MemoryOperator& op = m.top_operators[i];
        out += "<tr><td class=\"name\" title=\"" + Html(op.name) + "\">" + Html(op.name) +
               "</td><td class=\"num\" data-v=\"" + std::to_string(op.live_bytes) + "\">" + Bytes(op.live_bytes) +
               "</td><td class=\"num\" data-v=\"" + std::to_string(op.allocations) + "\">" + Count(op.allocations) +
               "</td><td class=\"num\" data-v=\"" + std::to_string(op.bytes) + "\">" + Bytes(op.bytes) + "</td></tr>";
      }
      out += "</tbody></table></div>\n";
    }
  }
  return out;
}

std::string Advice(const Analysis& a) {
  if (a.recommendations.empty()) return Note("(none: nothing crossed a threshold)");
  std::string out = Note(
                        "The largest saving a step first: each is what the step would lose without its cause, "
                        "replayed on the steps' dependency graph.") +
                    "<ul class=\"advice\">";
  for (const Recommendation& r : a.recommendations) {
    out += "<li data-id=\"" + Html(r.id) + "\" data-saving-us=\"" + FormatMicros(r.saving_ns) + "\" data-what-if=\"" +
           Html(r.what_if) + "\">" +
           (r.saving_ns > 0 ? "<b>saves " + Html(FormatDuration(r.saving_ns)) + " a step:</b> " : std::string()) +
           Html(RecommendationText(a, r)) + "</li>";
  }
  out += "</ul>\n";
  const std::string total = WhatIfTotalText(a);
  return total.empty() ? out : out + Note(Html(total) + ".");
}

// Copies and sets by kind, Tensor Core use, device work by launching operator, and the
// host's waits for the device.
std::string Copies(const Analysis& a, int top) {
  std::string out;
  if (!a.copies.empty()) {
    std::vector<std::string> labels;
    std::vector<std::vector<int64_t>> values;
    for (const CopyRow& r : a.copies) {
      labels.push_back(r.device + " " + r.kind + " (" + (r.gb_per_s() < 0 ? "-" : Printf("%.1f", r.gb_per_s())) +
                       " GB/s)");
      values.push_back({r.time_ns});
    }
    out += Note(
               "Time per kind of copy and set, with its bandwidth over the copies that record bytes (HTA's memory "
               "bandwidth, by the memory kinds Kineto names: pageable host memory is the slow one).") +
           StackedBars(labels, {{"time", "#4e79a7"}}, values) + HtmlTable("copies-table", CopiesTable(a), top, true);
  }
  if (a.tensor_cores.kernel_ns > 0) {
    out += "<h3>Tensor Cores</h3>\n" +
           Note(PercentOf(a.tensor_cores.kernel_time_share()) + " of kernel time ran in Tensor Core kernels.") +
           HtmlTable("tensor-cores-table", TensorCoreOpsTable(a), top, true);
    out += "<h3>Kernels by launching operator</h3>\n" +
           HtmlTable("kernels-by-operator-table", KernelsByOperatorTable(a), top, true);
  }
  if (!a.collective_sizes.empty()) {
    out += "<h3>Collectives by message</h3>\n" +
           Note(
               "NCCL kernels by the message they record; algorithm bandwidth is message bytes over time, bus "
               "bandwidth scales it by the bytes each rank moves (nccl-tests' definitions).") +
           HtmlTable("collective-sizes-table", CollectiveSizesTable(a), top, true);
  }
  if (!a.annotations.empty()) {
    out += "<h3>Annotations (record_function)</h3>\n" +
           Note(
               "Host: the annotation's spans; device: the work launched inside them; backward: the autograd work "
               "of the operators run inside them, which runs after the span on autograd's thread.") +
           HtmlTable("annotations-table", AnnotationsTable(a), top, true);
  }
  if (!a.synchronizations.empty()) {
    out += "<h3>Host waits for the device</h3>\n" +
           HtmlTable("synchronizations-table", SynchronizationsTable(a), top, true);
  }
  return out.empty() ? Note("(no device work)") : out;
}

}  // namespace

namespace report {

std::string PageStart(const std::string& title, const std::string& heading, const std::string& subtitle) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'; img-src data:\">"
         "<title>" +
         Html(title) + "</title><style>" + kStyle + "</style></head>\n<body>\n<header><h1>" + Html(heading) +
         "</h1><div class=\"file\">" + Html(subtitle) + "</div></header>\n";
}

std::string PageEnd() { return "</main>\n<script>" + std::string(kScript) + "</script>\n</body></html>\n"; }

}  // namespace report

std::string RenderHtml(const Analysis& a, const ReportOptions& o) {
  std::string file = a.trace.file;
  size_t slash = file.find_last_of('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  std::string out = PageStart("torch2pprof: " + base, "torch2pprof analyze", file);
  out += "<nav><a href=\"#advice\">Recommendations</a>" +
         std::string(a.flame.empty() ? "" : "<a href=\"#profile\">Profile</a>") +
         std::string(a.timelines.empty() ? "" : "<a href=\"#timeline\">Timeline</a>") +
         "<a href=\"#overview\">Overview</a><a href=\"#steps\">Steps</a>"
         "<a href=\"#idle\">Idle</a><a href=\"#copies\">Copies</a><a href=\"#operators\">Operators</a>"
         "<a href=\"#kernels\">Kernels</a><a href=\"#gpu\">GPU</a>"
         "<a href=\"#memory\">Memory</a>" +
         std::string(a.modules.empty() && a.python_functions.empty() ? "" : "<a href=\"#modules\">Modules</a>") +
         "<a href=\"#categories\">Categories</a></nav>\n<main>\n";
  out += Section("advice", "Recommendations", Advice(a));
  if (!a.flame.empty()) {
    out += Section("profile", "Profile: where the time goes, by the code that caused it",
                   FlameBody(a.flame,
                             "convert's call tree (the backward pass under the forward operator that created it), "
                             "summed over threads and steps."));
  }
  if (!a.timelines.empty()) {
    out += Section("timeline", "Timeline: inside the slowest steps", TimelineBody(a));
  }
  out += Section("overview", "Overview", Overview(a));
  out += Section("steps", a.whole_trace_step ? "Step breakdown (whole trace)" : "Step breakdown", Steps(a, o.top));
  // Why the steps take what they take, beside them: idle time by cause, then copies.
  out += Section("idle", "GPU idle time and launches", Idle(a, o.top));
  out += Section("copies", "Copies, Tensor Cores and device work by operator", Copies(a, o.top));
  out += Section("operators", "Operators",
                 Note("By host total; host self leaves out child operators and their own launches. Click a heading "
                      "to sort.") +
                     (a.operators.empty() ? Note("(no operators)")
                                          : HtmlTable("operators-table", OperatorsTable(a), o.top, true)));
  out += Section("kernels", "Kernels",
                 a.kernels.empty() ? Note("(no kernels)") : HtmlTable("kernels-table", KernelsTable(a), o.top, true));
  out += Section("gpu", "GPU", Gpu(a, o.top));
  out += Section("memory", "Memory", Memory(a, o.top));
  if (!a.modules.empty() || !a.python_functions.empty()) {
    std::string body = Note(
        "Each module instance under the instance that called it, with the backward moved under the forward op "
        "that created it; self leaves out child modules, host time leaves out waits. Sort by a column to rank.");
    if (!a.modules.empty()) {
      body += HtmlTable("modules-table", ModulesTable(a), o.top, true);
      body += "<h3>Module classes</h3>\n" + HtmlTable("module-classes-table", ModuleClassesTable(a), o.top, true);
    }
    if (!a.python_functions.empty()) {
      body += "<h3>Python functions</h3>\n" + HtmlTable("python-functions-table", PythonFunctionsTable(a), o.top, true);
    }
    out += Section("modules", "Modules", body);
  }
  out += Section("categories", "Categories", HtmlTable("categories-table", CategoriesTable(a), o.top, true));
  return out + PageEnd();
}

std::string RenderRanksHtml(const RanksAnalysis& a, const ReportOptions& o) {
  const size_t n = a.ranks.size();
  std::string title = std::to_string(n) + " ranks";
  if (n > 0 && a.ranks[0].world_size > 0) title += " (world size " + std::to_string(a.ranks[0].world_size) + ")";
  std::string out = PageStart("torch2pprof: " + title, "torch2pprof analyze: " + title,
                              n ? a.ranks.front().file + (n > 1 ? " … " + a.ranks.back().file : "") : "");
  out += "<nav><a href=\"#advice\">Recommendations</a><a href=\"#straggler\">Straggler</a>" +
         std::string(a.flame.empty() ? "" : "<a href=\"#profile\">Profile</a>") +
         "<a href=\"#ranks\">Ranks</a>"
         "<a href=\"#slow\">Slow ranks</a>"
         "<a href=\"#collectives\">Collectives</a><a href=\"#alignment\">Step alignment</a></nav>\n<main>\n";
  const std::string pct = std::to_string(static_cast<int>(100 * a.threshold + 0.5)) + "%";
  std::string late;
  // Each straggler's line links to its frame in the profile below (the script zooms there).
  auto profile_link = [&](size_t i) {
    if (a.flame.empty() || a.ranks[i].flame.empty()) return std::string();
    const int64_t rank = a.ranks[i].rank >= 0 ? a.ranks[i].rank : static_cast<int64_t>(i);
    return " <a href=\"#profile\" class=\"flame-root\" data-frame=\"rank " + std::to_string(rank) +
           "\">its profile</a>";
  };
  for (const Straggler& l : a.stragglers) {
    late += "<p class=\"late\">" + Html(LateSentence(a, l, "; ")) + profile_link(l.rank) + "</p>\n";
  }
  if (a.stragglers.empty()) late = Note(NoLateRank(a));
  if (n <= kManyRanks) {
    // Each rank's mean step, part by part: the late rank's own part stands out, and the
    // others' communication holds their wait for it.
    std::vector<std::string> labels;
    std::vector<ChartSeries> series;
    std::vector<std::vector<int64_t>> values;
    for (size_t k = 0; k < std::size(kStepParts); ++k) series.push_back({kStepParts[k].key, kPartColors[k]});
    for (size_t i = 0; i < n; ++i) {
      labels.push_back("rank " + RankName(a, i));
      values.emplace_back();
      for (const StepPart& p : kStepParts) values.back().push_back(a.ranks[i].mean_step.*p.field);
    }
    late += "<h3>Mean step per rank</h3>\n" + StackedBars(labels, series, values);
    std::vector<ShareBar> bars;
    for (size_t i = 0; i < n && i < a.waits.size(); ++i) {
      bars.push_back({"rank " + RankName(a, i), a.waits[i].wait_ns, a.ranks[i].step_median_ns,
                      "waits " + FormatDuration(a.waits[i].wait_ns) + " of a " +
                          FormatDuration(a.ranks[i].step_median_ns) + " step"});
    }
    late += "<h3>Wait in collectives per step, of the median step</h3>\n" + ShareBars(bars);
  } else {
    late += Note("Past " + std::to_string(kManyRanks) +
                 " ranks the page draws no bar per rank: the tables below list them all, and sort.");
  }
  std::string advice = a.recommendations.empty()
                           ? Note("(none: nothing crossed a threshold)")
                           : Note("Per step, largest possible saving first.") + "<ul class=\"advice\">";
  for (const RankRecommendation& r : a.recommendations) {
    advice += "<li data-id=\"" + Html(r.id) + "\" data-saving-us=\"" + FormatMicros(r.saving_ns) + "\">" +
              (r.saving_ns > 0 ? "<b>up to " + Html(FormatDuration(r.saving_ns)) + " a step:</b> " : std::string()) +
              Html(RankRecommendationText(a, r)) + "</li>";
  }
  if (!a.recommendations.empty()) advice += "</ul>\n";
  out += Section("advice", "Recommendations", advice);
  out += Section("straggler", "Straggler (the rank the others wait for in collectives)",
                 late + (a.stragglers.empty() ? "" : HtmlTable("late-table", StragglersTable(a), o.top, false)));
  if (!a.flame.empty()) {
    size_t with = 0;
    for (const RankSummary& r : a.ranks) with += !r.flame.empty();
    out += Section(
        "profile", "Profile: each rank's time by the code that caused it",
        FlameBody(a.flame,
                  "Each rank's profile (device time, host work) under a frame of its own: click "
                  "a rank to compare its code with the others', search to find a layer in "
                  "all of them." +
                      (with < a.ranks.size() ? " " + std::to_string(a.ranks.size() - with) +
                                                   " ranks came as summaries, which carry no profile: analyze their "
                                                   "traces for theirs."
                                             : std::string())));
  }
  std::string ranks = Note(
      "Per step: steps, their median and maximum, each part's mean, wait and transfer in collectives. Over the whole "
      "trace, as HTA defines them: GPU utilization, compute, idle, overlap. Click a heading to sort.");
  ranks += Note(WaitNote(a));
  ranks += HtmlTable("ranks-table", RanksTable(a), o.top, true);
  if (n > kManyRanks) ranks += "<h3>Over the ranks</h3>\n" + HtmlTable("spreads-table", SpreadTable(a), 0, false);
  out += Section("ranks", "Ranks", ranks);
  out += Section("slow", "Slow ranks (median step or compute time more than " + pct + " above the median of ranks)",
                 a.slow_ranks.empty() ? Note(NoSlowRank(a)) : HtmlTable("slow-table", SlowRanksTable(a), o.top, true));
  out += Section("collectives", "Collectives (time per rank; the rank with least time usually arrived last)",
                 a.collectives.empty() ? Note("(no nccl:/gloo: collectives or communication kernels)")
                                       : HtmlTable("collectives-table", CollectivesTable(a), o.top, true) +
                                             (CollectivesNote(a).empty() ? "" : Note(CollectivesNote(a))));
  out += Section(
      "alignment", "Step alignment (step N on every rank)",
      (AlignmentNote(a).empty() ? "" : Note(AlignmentNote(a))) +
          (a.steps.empty() ? Note("(no steps)") : HtmlTable("alignment-table", AlignmentTable(a), o.top, true)));
  return out + PageEnd();
}

std::string RenderSnapshotHtml(const SnapshotAnalysis& a, const ReportOptions& o) {
  const size_t slash = a.file.find_last_of('/');
  const std::string base = slash == std::string::npos ? a.file : a.file.substr(slash + 1);
  std::string out = PageStart("torch2pprof: " + base, "torch2pprof analyze: CUDA memory snapshot", a.file);
  out += "<nav><a href=\"#devices\">Devices</a>" +
         std::string(a.flame.empty() ? "" : "<a href=\"#profile\">Profile</a>") +
         "<a href=\"#timeline\">Timeline</a><a href=\"#peak\">Peak</a>"
         "<a href=\"#oom\">Out of memory</a></nav>\n<main>\n";
  std::string devices =
      Note(
          "At the dump. Free space as torch's _memory_viz segment summary splits it: rounding to the block size is "
          "internal, cached free blocks external; blocks whose free waits for their stream are pending.") +
      HtmlTable("devices-table", DevicesTable(a), 0, false);
  if (a.overflowed) devices += Note("The ring of allocator actions overflowed: the window starts at its oldest entry.");
  out += Section("devices", "Devices", devices);
  if (!a.flame.empty()) {
    out += Section("profile", "Profile: memory by the stack that allocated it",
                   FlameBody(a.flame, "convert's profile of the snapshot, summed over devices."));
  }
  std::string timeline = Note(
      "Allocated (bytes asked for) over the recorded window, from its first entry; the dot "
      "is the peak. Reserved below it.");
  for (const SnapshotDevice& d : a.devices) {
    timeline += "<h3>" + Html(PeakSentence(d)) + "</h3>\n";
    if (d.timeline.empty()) continue;
    timeline += SitesOverTime(d);
    std::vector<AreaPoint> allocated, reserved;
    int64_t most_reserved = 0, most_reserved_at = 0;
    for (size_t i = 0; i < d.timeline.size(); ++i) {
      const SnapshotLevel& l = d.timeline[i];
      const int64_t start = l.time_us * 1000;
      const int64_t end = i + 1 < d.timeline.size() ? d.timeline[i + 1].time_us * 1000 : start + 1000;
      allocated.push_back({start, std::max(end, start + 1), l.allocated_bytes});
      reserved.push_back({start, std::max(end, start + 1), l.reserved_bytes});
      if (l.reserved_bytes > most_reserved) most_reserved = l.reserved_bytes, most_reserved_at = start;
    }
    const int64_t origin = d.timeline.front().time_us * 1000;
    timeline += BytesOverTime(allocated, origin, d.peak_time_us * 1000, d.peak_bytes, {});
    timeline += "<h3>" + Html(d.device + ": reserved") + "</h3>\n" +
                BytesOverTime(reserved, origin, most_reserved_at, most_reserved, {});
  }
  out += Section("timeline", "Timeline", timeline);
  const std::vector<SiteRow> peak = PeakSiteRows(a);
  out +=
      Section("peak", "Live at the peak",
              Note("By the code that allocated it: the innermost Python line of the allocation stack, else the "
                   "backward node or the operator. go tool pprof on the profile convert writes has the whole stacks.") +
                  (peak.empty() ? Note("(nothing allocated)")
                                : HtmlTable("peak-table", SitesTable("peak_sites", peak, false), o.top, true)));
  const std::vector<OomRow> ooms = OomRows(a);
  const std::vector<SiteRow> oom_sites = OomSiteRows(a);
  out +=
      Section("oom", "Out of memory",
              ooms.empty() ? Note("(no oom entry in the ring)")
                           : HtmlTable("oom-table", OomsTable(ooms), 0, false) + "<h3>Live at each</h3>\n" +
                                 HtmlTable("oom-sites-table", SitesTable("oom_sites", oom_sites, true), o.top, true));
  return out + PageEnd();
}

}  // namespace torch2pprof
