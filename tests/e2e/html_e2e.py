#!/usr/bin/env python3
"""End-to-end tests of `torch2pprof analyze --format html` in a real browser.

Each trace's report is opened in headless Chromium (Debian's `chromium`) from disk,
with a few lines of test script appended that click a column heading, type into the
filter box and press "Show all", and write what the page then shows on <body>. The DOM
that Chromium dumps is read back and checked against `--format json` of the same trace:
- the page ran its script to the end with no console message (errors, and the
  Content-Security-Policy refusals any network request would cause);
- the step table shows every step with the same exact numbers as the JSON;
- the operator and kernel tables hold every row and show the first -top;
- sorting by calls, filtering by name and "Show all" give what the JSON says they must;
- one chart per section that has data, and the page is no wider than the window.
Screenshots of lm_train and resnet50_dl are written to --screenshots when given.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402

TOP = 10
WIDTH = 1280

PROBE = """<script>
(function () {
  var d = document.body.dataset;
  function visible(t) {
    return Array.prototype.filter.call(t.tBodies[0].rows, function (r) { return !r.hidden; });
  }
  var t = document.getElementById("operators-table");
  if (t) {
    var heads = Array.prototype.slice.call(t.tHead.rows[0].cells);
    var i = heads.findIndex(function (th) { return th.dataset.key === "calls"; });
    heads[i].click();
    d.sortedCalls = visible(t).map(function (r) { return r.cells[0].textContent; }).join("\\n");
    var box = t.closest(".tbl"), input = box.querySelector("input");
    input.value = "ATEN::";
    input.dispatchEvent(new Event("input"));
    d.filtered = visible(t).map(function (r) { return r.cells[0].textContent; }).join("\\n");
    d.filteredCount = box.querySelector(".count").textContent;
    box.querySelector("button.more").click();
    d.shownAll = visible(t).length;
  }
  d.overflow = document.documentElement.scrollWidth - window.innerWidth;
})();
</script>
"""


class Dom(html.parser.HTMLParser):
    """The parts of the dumped DOM the checks read."""

    def __init__(self):
        super().__init__()
        self.body = {}
        self.tables = {}  # id -> list of (hidden, [cell values: data-v or text])
        self.charts = 0
        self.h3 = []
        self._table = None
        self._row = None
        self._cell = None
        self._in_tbody = False
        self._h3 = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'body':
            self.body = a
        elif tag == 'svg' and 'chart' in a.get('class', ''):
            self.charts += 1
        elif tag == 'table' and 'id' in a:
            self._table = a['id']
            self.tables[self._table] = []
        elif tag == 'tbody' and self._table:
            self._in_tbody = True
        elif tag == 'tr' and self._in_tbody:
            self._row = ('hidden' in a, [])
            self.tables[self._table].append(self._row)
        elif tag == 'td' and self._row is not None:
            self._cell = a.get('data-v')
            self._text = ''
        elif tag == 'h3':
            self._h3 = ''

    def handle_endtag(self, tag):
        if tag == 'td' and self._row is not None:
            self._row[1].append(self._cell if self._cell is not None else self._text)
            self._cell = None
        elif tag == 'tbody':
            self._in_tbody = False
            self._row = None
        elif tag == 'table':
            self._table = None
        elif tag == 'h3' and self._h3 is not None:
            self.h3.append(self._h3)
            self._h3 = None

    def handle_data(self, data):
        if self._row is not None and self._cell is None:
            self._text += data
        if self._h3 is not None:
            self._h3 += data


def chromium():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        if shutil.which(name):
            return shutil.which(name)
    return None


def browse(browser, page, profile, *extra):
    """Chromium's dumped DOM and its console lines."""
    r = subprocess.run([browser, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                        '--enable-logging=stderr', '--v=0', f'--user-data-dir={profile}',
                        f'--window-size={WIDTH},2400', *extra, 'file://' + page],
                       capture_output=True, text=True, timeout=120)
    console = [line for line in r.stderr.split('\n') if ':CONSOLE' in line]
    return r, console


class Checks(Tally):
    def __init__(self, binary, browser, work, screenshots):
        super().__init__()
        self.binary, self.browser, self.work, self.screenshots = binary, browser, work, screenshots

    def analyze(self, *args):
        return subprocess.run([self.binary, 'analyze'] + list(args), capture_output=True, text=True)

    def check(self, trace):
        name = os.path.basename(trace).split('.')[0]
        problems = []
        r = self.analyze('--format', 'html', '-top', str(TOP), trace)
        j = self.analyze('--format', 'json', '-top', '0', trace)
        if r.returncode or j.returncode:
            return self.report(name, [f'exit {r.returncode}/{j.returncode}: {r.stderr.strip()}'])
        report = json.loads(j.stdout, parse_float=Decimal)
        page = os.path.join(self.work, name + '.html')
        with open(page, 'w') as f:
            f.write(r.stdout.replace('</body>', PROBE + '</body>'))
        b, console = browse(self.browser, page, os.path.join(self.work, 'profile'), '--dump-dom')
        if b.returncode:
            return self.report(name, [f'chromium exit {b.returncode}: {b.stderr[-300:]}'])
        dom = Dom()
        dom.feed(b.stdout)
        if console:
            problems.append(f'console: {console[0][-200:]}')
        if dom.body.get('data-ready') != '1' or dom.body.get('data-errors'):
            problems.append(f'script did not finish: {dom.body.get("data-errors")}')
        if int(dom.body.get('data-overflow', '1')) > 0:
            problems.append(f'page is {dom.body.get("data-overflow")} px wider than the window')

        # Steps: the same numbers as --format json.
        steps = dom.tables.get('steps-table', [])
        keys = ['total_us', 'kernel_us', 'memcpy_us', 'memset_us', 'communication_us', 'runtime_us',
                'dataloader_us', 'cpu_exec_us', 'other_us']
        want = [[s['name']] + [str(s[k]) for k in keys] for s in report['steps']]
        got = [cells for hidden, cells in steps]
        if [[c[0]] + [str(Decimal(x)) for x in c[1:]] for c in got] != want:
            problems.append(f'step table {got[:2]} != JSON {want[:2]}')

        for table, rows in (('operators-table', report['operators']), ('kernels-table', report['kernels'])):
            dom_rows = dom.tables.get(table)
            if not rows:
                continue
            if dom_rows is None or len(dom_rows) != len(rows):
                problems.append(f'{table}: {None if dom_rows is None else len(dom_rows)} rows, JSON has {len(rows)}')
        ops = report['operators']
        if ops:
            # Sorted by calls, largest first, ties in the table's order; the first TOP show.
            by_calls = [o['name'] for o in sorted(ops, key=lambda o: -o['calls'])][:TOP]
            if dom.body.get('data-sorted-calls', '').split('\n') != by_calls:
                problems.append(f'sorted by calls: {dom.body.get("data-sorted-calls", "")[:80]!r}')
            matching = [o['name'] for o in sorted(ops, key=lambda o: -o['calls']) if 'aten::' in o['name'].lower()]
            if dom.body.get('data-filtered', '').split('\n') != matching[:TOP]:
                problems.append(f'filter: {dom.body.get("data-filtered", "")[:80]!r}')
            if dom.body.get('data-filtered-count') != f'{min(TOP, len(matching))} of {len(matching)} matching rows':
                problems.append(f'filter count: {dom.body.get("data-filtered-count")!r}')
            if dom.body.get('data-shown-all') != str(len(matching)):
                problems.append(f'show all: {dom.body.get("data-shown-all")} rows, {len(matching)} match')
        # Two charts per device whose memory peak is 1 MiB or more (its level, and by operator where it
        # has site series); a few CPU scalars get a heading.
        charts = 1 + (1 if report['gpu'] else 0) + (1 if report['idle_time'] else 0) + \
            (1 if report['copies'] else 0) + sum(1 + (1 if m['site_series'] else 0) for m in report['memory']
                                                 if m['peak_bytes'] >= 1 << 20)
        # Copies by kind: the JSON's bytes and bandwidth, row by row.
        copies = [[c[1], c[3], c[5]] for h, c in dom.tables.get('copies-table', [])]
        want_copies = [[r['kind'], str(r['bytes']), str(r.get('gb_per_s', ''))] for r in report['copies']]
        if copies != want_copies:
            problems.append(f'copies table {copies[:2]} != JSON {want_copies[:2]}')
        # Idle time by cause: the JSON's numbers, stream by stream.
        idle = [[c[0], c[1]] + [str(Decimal(x)) for x in c[4:7]] for h, c in dom.tables.get('idle-table', [])]
        want_idle = [[r['device'], r['stream'], str(r['host_wait_us']), str(r['kernel_wait_us']), str(r['other_us'])]
                     for r in report['idle_time']]
        if idle != want_idle:
            problems.append(f'idle table {idle[:2]} != JSON {want_idle[:2]}')
        # Device time by kernel type (a view drawn from its registry entry): the JSON's rows.
        kt = [[c[0], c[1], str(Decimal(c[2]))] for h, c in dom.tables.get('kernel-types-table', [])]
        want_kt = [[r['device'], r['type'], str(r['time_us'])] for r in report['kernel_types']]
        if kt != want_kt:
            problems.append(f'kernel types table {kt[:2]} != JSON {want_kt[:2]}')
        # The devices' temporal breakdown (drawn the same way): span, computation, other work, idle.
        tb = [[c[0]] + [str(Decimal(x)) for x in (c[1], c[2], c[4], c[6])]
              for h, c in dom.tables.get('temporal-breakdown-table', [])]
        want_tb = [[r['device']] + [str(r[k]) for k in ('span_us', 'compute_us', 'non_compute_us', 'idle_us')]
                   for r in report['temporal_breakdown']]
        if tb != want_tb:
            problems.append(f'temporal breakdown table {tb[:2]} != JSON {want_tb[:2]}')
        if dom.charts != charts:
            problems.append(f'{dom.charts} charts, want {charts}')
        for m in report['memory']:
            if not any(h.startswith(m['device'] + ': peak ') for h in dom.h3):
                problems.append(f'no memory chart heading for {m["device"]}')

        if self.screenshots and name in ('lm_train', 'resnet50_dl'):
            plain = os.path.join(self.work, name + '.plain.html')
            with open(plain, 'w') as f:
                f.write(r.stdout)
            png = os.path.join(self.screenshots, f'html_report_{name}.png')
            s, _ = browse(self.browser, plain, os.path.join(self.work, 'profile'), f'--screenshot={png}',
                          '--hide-scrollbars')
            with open(png, 'rb') as f:
                head = f.read(8)
            if s.returncode or head != b'\x89PNG\r\n\x1a\n' or os.path.getsize(png) < 20000:
                problems.append(f'screenshot {png}: exit {s.returncode}, {os.path.getsize(png)} bytes')
        self.report(name, problems)

    def check_snapshot(self, snapshot):
        """A memory snapshot's page: the script runs, nothing is wider than the window, the
        devices and peak tables hold JSON's numbers, and each device has its two charts."""
        name = os.path.basename(snapshot).split('.')[0]
        problems = []
        r = self.analyze('--format', 'html', '-top', str(TOP), snapshot)
        j = self.analyze('--format', 'json', snapshot)
        if r.returncode or j.returncode:
            return self.report(name, [f'exit {r.returncode}/{j.returncode}: {r.stderr.strip()[:200]}'])
        report = json.loads(j.stdout)
        page = os.path.join(self.work, name + '.html')
        with open(page, 'w') as f:
            f.write(r.stdout.replace('</body>', PROBE + '</body>'))
        b, console = browse(self.browser, page, os.path.join(self.work, 'profile'), '--dump-dom')
        if b.returncode:
            return self.report(name, [f'chromium exit {b.returncode}: {b.stderr[-300:]}'])
        dom = Dom()
        dom.feed(b.stdout)
        if console:
            problems.append(f'console: {console[0][-200:]}')
        if dom.body.get('data-ready') != '1' or dom.body.get('data-errors'):
            problems.append(f'script did not finish: {dom.body.get("data-errors")}')
        if int(dom.body.get('data-overflow', '1')) > 0:
            problems.append(f'page is {dom.body.get("data-overflow")} px wider than the window')
        devices = [c[0] for h, c in dom.tables.get('devices-table', [])]
        if devices != [d['device'] for d in report['devices']]:
            problems.append(f'devices table {devices}')
        peak = [(c[0], h) for h, c in dom.tables.get('peak-table', [])]
        if len(peak) != len(report['peak_sites']) or any(h for _, h in peak[:TOP]):
            problems.append(f'peak table: {len(peak)} rows, JSON {len(report["peak_sites"])}')
        # allocated and reserved, and by site where the device has site series
        want_charts = 2 * len(report['devices']) + len({r['device'] for r in report['site_series']})
        if dom.charts != want_charts:
            problems.append(f'{dom.charts} charts, want {want_charts}')
        self.report(name, problems)

    def check_ranks(self, name, inputs):
        """The report over ranks: its tables hold JSON's numbers for every rank, the
        straggler is named, and the bars are drawn up to 16 ranks (none past)."""
        problems = []
        r = self.analyze('--format', 'html', '-top', str(TOP), *inputs)
        j = self.analyze('--format', 'json', *inputs)
        if r.returncode or j.returncode:
            return self.report(name, [f'exit {r.returncode}/{j.returncode}: {r.stderr.strip()[:200]}'])
        report = json.loads(j.stdout, parse_float=Decimal)
        page = os.path.join(self.work, name + '.html')
        with open(page, 'w') as f:
            f.write(r.stdout.replace('</body>', PROBE + '</body>'))
        b, console = browse(self.browser, page, os.path.join(self.work, 'profile'), '--dump-dom')
        if b.returncode:
            return self.report(name, [f'chromium exit {b.returncode}: {b.stderr[-300:]}'])
        dom = Dom()
        dom.feed(b.stdout)
        if console:
            problems.append(f'console: {console[0][-200:]}')
        if dom.body.get('data-ready') != '1' or dom.body.get('data-errors'):
            problems.append(f'script did not finish: {dom.body.get("data-errors")}')
        if int(dom.body.get('data-overflow', '1')) > 0:
            problems.append(f'page is {dom.body.get("data-overflow")} px wider than the window')
        rows = dom.tables.get('ranks-table', [])
        want = [[str(x['rank']), str(x['steps']), str(x['step_median_us']), str(x['wait_us'])] for x in report['ranks']]
        got = [[c[0], c[1], str(Decimal(c[2])), None] for hidden, c in rows]
        heads = None
        if rows:
            # The wait column's place: the JSON key of each heading is in data-key.
            heads = [k for k in re.findall(r'<th data-key="([a-z_]+)"', r.stdout.split('id="ranks-table"')[1]
                                           .split('</thead>')[0])]
            for g, (hidden, c) in zip(got, rows):
                g[3] = str(Decimal(c[heads.index('wait_us')]))
        if got != want:
            problems.append(f'ranks table {got[:2]} != JSON {want[:2]} ({len(got)} rows, {len(want)})')
        if any(hidden for hidden, c in rows):
            problems.append('the ranks table hides ranks (it shows every one, as JSON and CSV)')
        late = dom.tables.get('late-table', [])
        if [c[0] for h, c in late] != [str(x['rank']) for x in report['stragglers']]:
            problems.append(f'late table {late}')
        if [c[0] for h, c in dom.tables.get('slow-table', [])] != [str(x['rank']) for x in report['slow_ranks']]:
            problems.append('slow ranks differ from JSON')
        charts = 2 if len(report['ranks']) <= 16 else 0
        if dom.charts != charts:
            problems.append(f'{dom.charts} charts, want {charts}')
        if len(report['ranks']) > 16 and len(dom.tables.get('spreads-table', [])) != len(report['spreads']):
            problems.append('no spreads table past 16 ranks')
        self.report(name, problems)


SAME_NUMBERS = r'''(function () {
  var bad = [], n = 0;
  document.querySelectorAll('td.num[data-v]').forEach(function (td) {
    var v = td.dataset.v, text = td.textContent, want = null;
    if (v === '') return;
    if (/^-?[0-9.]+(ns|us|ms|s)$/.test(text)) {
      if (!/^-?[0-9]+(\.[0-9]{1,3})?$/.test(v)) return;  // a mean: the cell formats its whole ns, not v
      want = t2pDuration(Math.round(parseFloat(v) * 1000));
    }
    else if (/^-?[0-9.]+ (B|KiB|MiB|GiB|TiB)$/.test(text)) want = t2pBytes(parseInt(v, 10));
    else return;
    n++;
    var th = td.closest('table').tHead.rows[0].cells[td.cellIndex];
    if (want !== text) bad.push(text + ' vs ' + want + ' (' + (th.dataset.key || th.textContent) + ')');
  });
  return [n, bad.slice(0, 5)]; })()'''


def same_numbers(c, binary, browser, work, trace):
    """The page's script formats durations and sizes as the C++ writes the cells of the same
    page (format.js against report/format.cc): every duration and size cell of the tables
    (data-v, the exact value) formatted again in the browser, with exact ties (1,125 ns:
    printf rounds to even, toFixed up) in a trace made for it."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cdp import Browser
    ties = os.path.join(work, 'ties.json')
    evs = [{'ph': 'X', 'name': 'ProfilerStep#1', 'cat': 'user_annotation', 'pid': 1, 'tid': 1, 'ts': 0, 'dur': 100000}]
    for k, dur in enumerate(['1.125', '2.375', '10.25', '10.75', '1125.5', '12.5', '0.5', '999.995', '1.015']):
        evs.append({'ph': 'X', 'name': f'aten::tie{k}', 'cat': 'cpu_op', 'pid': 1, 'tid': 1, 'ts': 10 + k * 2000,
                    'dur': float(dur)})
    with open(ties, 'w') as f:
        json.dump({'schemaVersion': 1, 'traceEvents': evs}, f)
    problems, total = [], 0
    with Browser(browser, os.path.join(work, 'cdp-numbers'), width=WIDTH, height=1000) as b:
        for t in (trace, ties):
            page = os.path.join(work, 'numbers.html')
            r = subprocess.run([binary, 'analyze', '--quiet', '--format', 'html', '-top', '0', t],
                               capture_output=True, text=True)
            with open(page, 'w') as f:
                f.write(r.stdout)
            p = b.open('file://' + page)
            n, bad = p.eval(SAME_NUMBERS)
            total += n
            if not n:
                problems.append(f'{os.path.basename(t)}: no number cells found')
            if bad:
                problems.append(f'{os.path.basename(t)}: the page\'s script writes {bad}')
    c.report(f'the page\'s script formats {total} cells\' numbers as the C++ does', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--screenshots', help='folder for the PNGs of lm_train and resnet50_dl')
    a = ap.parse_args()
    browser = chromium()
    if not browser:
        print('FAIL chromium not found: scripts/install-deps.sh installs it')
        return 1
    with tempfile.TemporaryDirectory() as work:
        c = Checks(a.binary, browser, work, a.screenshots)
        d = os.path.join(a.testdata, 'real', 'torch211')
        traces = [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith('.pt.trace.json.gz')]
        traces.append(os.path.join(a.testdata, 'convert', 'exact_decimals.json'))
        for t in traces:
            try:
                c.check(t)
            except Exception as e:  # a crash of a check is a failure too
                c.report(os.path.basename(t), [f'{type(e).__name__}: {e}'])
        same_numbers(c, a.binary, browser, work, os.path.join(d, 'resnet50_dl.pt.trace.json.gz'))
        for snapshot in ('oom_train.pickle.gz', 'cs336__medium_ctx128_training_step.pickle.gz'):
            try:
                c.check_snapshot(os.path.join(a.testdata, 'snapshots', snapshot))
            except Exception as e:
                c.report(snapshot, [f'{type(e).__name__}: {e}'])
        late = [os.path.join(d, f'ddp_gloo_4ranks_late2_rank{r}.pt.trace.json.gz') for r in range(4)]
        many = []
        try:  # 40 ranks, as their summaries: copies of the four with their own ranks
            for r in range(4):
                p = os.path.join(work, f'src{r}.summary.json')
                subprocess.run([a.binary, 'summarize', late[r], '-o', p], check=True, capture_output=True)
                src = json.load(open(p))
                for k in range(10):
                    q = os.path.join(work, f'rank{r + 4 * k:03d}.summary.json')
                    json.dump(dict(src, rank=r + 4 * k, world_size=40), open(q, 'w'))
                    many.append(q)
            c.check_ranks('ranks: 4 real DDP ranks, rank 2 late', late)
            c.check_ranks('ranks: 40 ranks from summaries', sorted(many))
        except Exception as e:
            c.report('ranks', [f'{type(e).__name__}: {e}'])
        return c.summary()


if __name__ == '__main__':
    sys.exit(main())
