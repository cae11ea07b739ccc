#!/usr/bin/env python3
"""The step timeline: `analyze --timeline OUT.json` and the HTML report's timeline.

--timeline, on real traces; expected values from the trace's text:
- strict JSON that opens with the header torch2pprof recognises (a rerun may replace it);
- every complete event of the trace is there with its name, category, lane and exact
  time (python_function spans as the README's repair ends them);
- the critical path lane tiles each analysed step, and its time by bound is
  `--format json`'s critical_path for that step;
- each flow has one start and one finish (bp "e"), both inside a slice on their lane,
  which is what Perfetto's JSON importer binds a flow to (no Perfetto runs offline);
- refused: over its input (exit 3), with a snapshot or several traces (exit 2).

The HTML timeline in headless Chromium, driven through the DevTools protocol (cdp.py):
- the data: the slowest steps, slowest first; the events in a step's window (from the
  trace text) all drawn, alone or counted in a merged bar; the critical stretches tile
  the step and sum by bound to the JSON's; each stream's gaps by cause equal HTA's idle
  rule applied to the trace text in that window;
- a user's actions: the wheel zooms in around the pointer, a drag pans, hovering a bar
  names it, a click on a lane's name shows all its rows, the buttons zoom and reset,
  the keyboard picks another step; no console message, no error.
With --screenshot PNG, lm_train's timeline is written there, with --sites-screenshot a
snapshot's memory by site (the README's pictures).

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import opened  # noqa: E402
from e2e_common import Tally, as_text, ns, python_ends, read_events  # noqa: E402
from html_e2e import chromium  # noqa: E402

HEAD = '{"displayTimeUnit":"ns","otherData":{"generator":"torch2pprof analyze --timeline"'
BOUNDS = ['gpu_kernel_kernel_overhead', 'gpu_kernel_launch_overhead', 'data_loading', 'cpu_bound',
          'gpu_compute_bound', 'gpu_communication_bound']
DEVICE_CATS = {'kernel', 'gpu_memcpy', 'gpu_memset'}


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True)


def complete_events(evs):
    """(name, cat, pid, tid, start ns, end ns) of every complete event, as torch2pprof keeps it."""
    ends = python_ends(evs)
    out = collections.Counter()
    for k, e in enumerate(evs):
        if e.get('ph') != 'X' or 'ts' not in e or e.get('dur') is None:
            continue
        if e.get('cat') == 'Trace':  # the profiler's own span: skipped (docs/reference.md)
            continue
        start = ns(e['ts'])
        end = start + ns(e['dur'])
        if k in ends:
            if ends[k] is None:
                continue
            end = ends[k]
        out[(e.get('name', ''), e.get('cat', ''), as_text(e.get('pid')), as_text(e.get('tid')), start, end)] += 1
    return out


def check_timeline_file(c, binary, tmp, trace):
    name = os.path.basename(trace).split('.')[0]
    out = os.path.join(tmp, name + '.timeline.json')
    r = run(binary, 'analyze', '--format', 'json', '--timeline', out, trace)
    if r.returncode:
        return c.report(f'timeline {name}', [f'exit {r.returncode}: {r.stderr.strip()}'])
    report = json.loads(r.stdout, parse_float=Decimal)
    problems = []
    text = open(out).read()
    if not text.startswith(HEAD):
        problems.append(f'starts {text[:80]!r}')
    doc = json.loads(text, parse_float=Decimal)
    evs = doc['traceEvents']
    crit_pid = next(e['pid'] for e in evs if e['ph'] == 'M' and e['name'] == 'process_name'
                    and e['args']['name'] == 'critical path')
    # Every complete event of the trace, exact.
    want = complete_events(read_events(trace))
    got = collections.Counter()
    for e in evs:
        if e['ph'] == 'X' and e['pid'] != crit_pid:
            start = ns(e['ts'])
            got[(e['name'], e['cat'], as_text(e['pid']), as_text(e['tid']), start, start + ns(e['dur']))] += 1
    if got != want:
        missing, extra = want - got, got - want
        problems.append(f'{sum(missing.values())} events missing (e.g. {list(missing)[:1]}), '
                        f'{sum(extra.values())} extra (e.g. {list(extra)[:1]})')
    # The critical path: tiles each step, and sums by bound to the JSON's.
    by_step = collections.defaultdict(list)
    for e in evs:
        if e['ph'] == 'X' and e['pid'] == crit_pid:
            by_step[e['args']['step']].append((ns(e['ts']), ns(e['ts']) + ns(e['dur']), e['cat']))
    steps = {s['name']: s for s in report['steps']}
    for row in report['critical_path']:
        spans = sorted(by_step.get(row['step'], []))
        if not spans:
            problems.append(f'{row["step"]}: no critical path')
            continue
        holes = [(a[1], b[0]) for a, b in zip(spans, spans[1:]) if a[1] != b[0]]
        length = spans[-1][1] - spans[0][0]
        if holes or length != ns(row['length_us']):
            problems.append(f'{row["step"]}: holes {holes[:2]}, length {length} != {ns(row["length_us"])}')
        if spans[0][0] != ns(steps[row['step']]['start_us']):
            problems.append(f'{row["step"]}: starts {spans[0][0]}, the step at {ns(steps[row["step"]]["start_us"])}')
        sums = collections.Counter()
        for a, b, cat in spans:
            sums[cat] += b - a
        for bound in BOUNDS:
            if sums[bound] != ns(row['bound_by'][bound]):
                problems.append(f'{row["step"]} {bound}: {sums[bound]} ns != JSON {ns(row["bound_by"][bound])}')
    # Flows: one start, one finish, each inside a slice on its lane.
    slices = collections.defaultdict(list)
    for e in evs:
        if e['ph'] == 'X' and e['pid'] != crit_pid:
            slices[(e['pid'], e['tid'])].append((ns(e['ts']), ns(e['ts']) + ns(e['dur'])))
    for v in slices.values():
        v.sort()
    flows = collections.defaultdict(dict)
    for e in evs:
        if e['ph'] in 'sf':
            if e['ph'] in flows[e['id']]:
                problems.append(f'flow {e["id"]}: two {e["ph"]}')
            flows[e['id']][e['ph']] = e
    if not flows and any(len(set(x[2] for x in v)) > 1 for v in by_step.values()):
        problems.append('no flows')
    bad = 0
    for fid, f in flows.items():
        if set(f) != {'s', 'f'} or f['f'].get('bp') != 'e':
            bad += 1
            continue
        for e in f.values():
            t = ns(e['ts'])
            if not any(a <= t <= b for a, b in slices[(e['pid'], e['tid'])]):
                bad += 1
                break
    if bad:
        problems.append(f'{bad} of {len(flows)} flows unpaired or outside a slice')
    # A rerun replaces its own output.
    r2 = run(binary, 'analyze', '--format', 'json', '--timeline', out, trace)
    if r2.returncode or open(out).read() != text:
        problems.append(f'rerun: exit {r2.returncode} {r2.stderr.strip()}, same bytes: {open(out).read() == text}')
    c.report(f'timeline {name}: {len(want)} events, {len(flows)} flows, {len(report["critical_path"])} steps',
             problems)


def check_refusals(c, binary, tmp, trace, snapshot):
    problems = []
    copy = os.path.join(tmp, 'input.json.gz')
    with open(trace, 'rb') as f, open(copy, 'wb') as g:
        g.write(f.read())
    before = open(copy, 'rb').read()
    for args, status in ((['--timeline', copy, copy], 3),
                         (['--timeline', os.path.join(tmp, 'x.json'), snapshot], 2),
                         (['--timeline', os.path.join(tmp, 'y.json'), copy, copy], 2)):
        r = run(binary, 'analyze', *args)
        if r.returncode != status or len(r.stderr.strip().split('\n')) != 1:
            problems.append(f'{args}: exit {r.returncode} (want {status}): {r.stderr.strip()[:200]}')
    if open(copy, 'rb').read() != before:
        problems.append('the input changed')
    for left in ('x.json', 'y.json'):
        if os.path.exists(os.path.join(tmp, left)):
            problems.append(f'{left} written')
    c.report('timeline: refused over its input, with a snapshot, with two traces', problems)


def idle_by_cause(evs, lane, start, end):
    """HTA's idle rule (hta/analyzers/breakdown_analysis.py) on the trace text: each gap on
    the stream before work that starts in [start, end), from the stream's work before it."""
    launch = {}
    for e in evs:
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        if e.get('ph') == 'X' and e.get('cat') in ('cuda_runtime', 'cuda_driver') and 'correlation' in a:
            launch[a['correlation']] = ns(e['ts'])
    work = sorted((ns(e['ts']), ns(e['ts']) + ns(e['dur']), e) for e in evs
                  if e.get('ph') == 'X' and e.get('cat') in DEVICE_CATS and e.get('dur') and ns(e['dur']) > 0
                  and (as_text(e.get('pid')), as_text(e.get('tid'))) == lane)
    out = collections.Counter()
    last = None
    for a, b, e in work:
        if a >= end:
            break
        if last is not None and a > last and a > start:
            corr = (e.get('args') or {}).get('correlation')
            gap = a - max(last, start)
            if corr in launch and launch[corr] > last:
                out['host wait'] += gap
            elif a - last < 30000:
                out['kernel wait'] += gap
            else:
                out['other'] += gap
        last = b if last is None else max(last, b)
    return out


def check_page(c, binary, browser, tmp, trace, screenshot=None):
    name = os.path.basename(trace).split('.')[0]
    page = os.path.join(tmp, name + '.html')
    r = run(binary, 'analyze', '--format', 'html', trace)
    j = run(binary, 'analyze', '--format', 'json', trace)
    if r.returncode or j.returncode:
        return c.report(f'timeline page {name}', [f'exit {r.returncode}/{j.returncode}: {r.stderr.strip()}'])
    with open(page, 'w') as f:
        f.write(r.stdout)
    report = json.loads(j.stdout, parse_float=Decimal)
    evs = read_events(trace)
    problems = []
    with opened(browser, os.path.join(tmp, 'profile-' + name), page, problems, width=1400, height=1000) as p:
        if p.eval('document.body.dataset.ready') != '1' or p.eval('document.body.dataset.errors'):
            problems.append(f'script did not finish: {p.eval("document.body.dataset.errors")}')
        data = p.eval('JSON.parse(document.querySelector(".timeline script").textContent)')
        steps = data['steps']
        # The critical path's lane is painted in the legend's colours (the script reads them
        # from it): every painted pixel across its middle row is one of the bounds'.
        painted = p.eval("""(function () {
          var c = document.querySelector('.timeline canvas'), d = window.devicePixelRatio || 1;
          var px = c.getContext('2d').getImageData(200 * d, 26 * d, c.width - 200 * d, 1).data, seen = {};
          for (var i = 0; i < px.length; i += 4) if (px[i + 3] === 255) seen[px[i] + ',' + px[i + 1] + ',' + px[i + 2]] = 1;
          var legend = [];
          document.querySelectorAll('.timeline .legend i').forEach(function (i) {
            var m = getComputedStyle(i).backgroundColor.match(/\\d+/g); legend.push(m.slice(0, 3).join(','));
          });
          return {seen: Object.keys(seen), legend: legend};
        })()""")
        bounds = set(painted['legend'][:6])
        if not painted['seen'] or not set(painted['seen']) & bounds:
            problems.append(f'the critical lane is painted {painted["seen"][:4]}, not in the legend\'s {sorted(bounds)}')
        lengths = sorted((ns(s['total_us']) for s in report['steps']), reverse=True)
        if [s['length'] for s in steps] != lengths[:len(steps)]:
            problems.append(f'steps {[s["length"] for s in steps]} are not the slowest {lengths[:len(steps)]}')
        crit = {row['step']: row for row in report['critical_path']}
        lanes_of = {}
        for e in evs:
            if e.get('ph') == 'M' and e.get('name') == 'thread_name':
                lanes_of[(as_text(e.get('pid')), as_text(e.get('tid')))] = e['args']['name']
        compared = []
        for s in steps:
            a, z = s['start'], s['start'] + s['length']
            # every event of the window drawn, alone or counted in a merged bar
            inside = sum(1 for (nm, cat, pid, tid, x, y), k in complete_events(evs).items() for _ in range(k)
                         if x < z and y > a)
            bars = s['bars']
            drawn = sum(bars[i + 5] for i in range(0, len(bars), 6))
            if drawn < inside or s['events'] != inside:  # a span split by a partial overlap: two bars
                problems.append(f'{s["step"]}: {drawn} events drawn, {s["events"]} said, {inside} in the window')
            cr = s['critical']
            spans = [(cr[i + 1], cr[i + 2], cr[i + 3]) for i in range(0, len(cr), 6)]
            holes = [x for x, y in zip(spans, spans[1:]) if x[1] != y[0]]
            if holes or not spans or spans[0][0] != 0 or spans[-1][1] != s['length']:
                problems.append(f'{s["step"]}: the critical path does not tile the step ({holes[:2]})')
            sums = collections.Counter()
            for x, y, k in spans:
                sums[BOUNDS[k]] += y - x
            for bound in BOUNDS:
                # merged stretches take the bound of their longest: only those change the sums
                merged = sum(cr[i + 2] - cr[i + 1] for i in range(0, len(cr), 6) if cr[i + 5] > 1)
                if abs(sums[bound] - ns(crit[s['step']]['bound_by'][bound])) > merged:
                    problems.append(f'{s["step"]} {bound}: {sums[bound]} != JSON '
                                    f'{ns(crit[s["step"]]["bound_by"][bound])} (merged {merged})')
            gaps = s['gaps']
            for li, lane in enumerate(s['lanes']):
                if not lane[1]:
                    continue
                pid_tid = None
                for e in evs:
                    if e.get('ph') == 'X' and e.get('cat') in DEVICE_CATS:
                        dev = (e.get('args') or {}).get('device')
                        if lane[0].endswith(' stream ' + as_text(e.get('tid'))) and \
                                lane[0].startswith(f'cuda:{dev} ' if dev is not None else ''):
                            pid_tid = (as_text(e.get('pid')), as_text(e.get('tid')))
                            break
                if pid_tid is None:
                    continue
                want = idle_by_cause(evs, pid_tid, a, z)
                got = collections.Counter()
                for i in range(0, len(gaps), 5):
                    if gaps[i] == li:
                        got[data['causes'][gaps[i + 3]]] += gaps[i + 2] - gaps[i + 1]
                compared.append(sum(want.values()))
                if +want != +got:
                    problems.append(f'{s["step"]} {lane[0]}: gaps {dict(got)} != HTA rule {dict(want)}')
        if not compared or not any(compared):
            problems.append('no stream gaps compared with the trace text')
        # A user's actions.
        view = '.timeline .view'
        v0 = p.eval(f'document.querySelector("{view}").dataset.view')
        w = p.box('.timeline canvas')[2]
        p.wheel('.timeline canvas', w * 0.6, 40, -500)
        v1 = p.eval(f'document.querySelector("{view}").dataset.view')
        lo0, hi0 = map(int, v0.split('-'))
        lo1, hi1 = map(int, v1.split('-'))
        if not (hi1 - lo1 < hi0 - lo0 and lo1 > lo0):
            problems.append(f'the wheel did not zoom in: {v0} -> {v1}')
        p.drag('.timeline canvas', w * 0.7, 40, w * 0.4)
        v2 = p.eval(f'document.querySelector("{view}").dataset.view')
        lo2, hi2 = map(int, v2.split('-'))
        if not (lo2 > lo1 and abs((hi2 - lo2) - (hi1 - lo1)) <= 1):
            problems.append(f'a drag did not pan: {v1} -> {v2}')
        p.click('button[data-zoom="reset"]')
        if p.eval(f'document.querySelector("{view}").dataset.view') != v0:
            problems.append('"Whole step" did not reset the view')
        p.click('button[data-zoom="0.5"]')
        lo3, hi3 = map(int, p.eval(f'document.querySelector("{view}").dataset.view').split('-'))
        if hi3 - lo3 > (hi0 - lo0) // 2 + 1:
            problems.append('"Zoom in" did not halve the view')
        p.click('button[data-zoom="reset"]')
        # hover the widest bar of the first lane: the info line names its event
        s0 = steps[0]
        bars = s0['bars']
        first = max((i for i in range(0, len(bars), 6) if bars[i] == 0 and bars[i + 1] == 0),
                    key=lambda i: bars[i + 3] - bars[i + 2])
        lane_y = p.eval('(function(){var c=document.querySelector(".timeline canvas");return 18+16+6;})()')
        mid = (bars[first + 2] + bars[first + 3]) / 2
        x = 200 + mid / s0['length'] * (w - 200)
        p.hover('.timeline canvas', x, lane_y + 5)
        info = p.eval('document.querySelector(".timeline .info").textContent')
        if s0['names'][bars[first + 4]] not in info:
            problems.append(f'hovering {s0["names"][bars[first + 4]]!r} says {info!r}')
        if screenshot:  # the whole step, as it opens
            p.screenshot(screenshot, selector='#timeline', full_width=True)
        # a click on a deep lane's name shows all its rows
        deep = [i for i, lane in enumerate(s0['lanes']) if lane[2] > 6]
        if deep:
            h0 = p.eval('document.querySelector(".timeline canvas").clientHeight')
            ys = p.eval('(function(){return 0;})()')
            y = 18 + 16 + 6 + sum(min(max(l[2], 1), 6) * 14 + 6 for l in s0['lanes'][:deep[0]]) + 4
            p.click('.timeline canvas', dx=20, dy=y + ys)
            h1 = p.eval('document.querySelector(".timeline canvas").clientHeight')
            if h1 - h0 != (s0['lanes'][deep[0]][2] - 6) * 14:
                problems.append(f'a click on {s0["lanes"][deep[0]][0]!r} grew the lanes {h0} -> {h1} px')
        if len(steps) > 1:
            p.select('.timeline select', 1)
            if p.eval('document.querySelector(".timeline").dataset.step') != steps[1]['step']:
                problems.append('the keyboard did not pick the second step')
        if int(p.eval(f'document.querySelector("{view}").dataset.drawn')) == 0:
            problems.append('nothing drawn')
    c.report(f'timeline page {name}: {len(steps)} steps, {sum(s["events"] for s in steps)} events, '
             f'{len(compared)} streams\' gaps', problems)


def check_bounded(c, binary, tmp):
    """A step of 200,000 short operators on 2 threads: the page draws at most 20,000 bars
    and gaps, and the merged bars count every event."""
    evs = [{'ph': 'X', 'name': 'ProfilerStep#1', 'cat': 'user_annotation', 'pid': 1, 'tid': 1, 'ts': 0, 'dur': 400000}]
    for k in range(100000):
        for tid in (1, 2):
            evs.append({'ph': 'X', 'name': f'aten::op{k % 7}', 'cat': 'cpu_op', 'pid': 1, 'tid': tid,
                        'ts': 1 + k * 3.5, 'dur': 2})
    trace = os.path.join(tmp, 'many.json')
    with open(trace, 'w') as f:
        json.dump({'schemaVersion': 1, 'traceEvents': evs}, f)
    r = run(binary, 'analyze', '--format', 'html', trace)
    problems = [] if r.returncode == 0 else [f'exit {r.returncode}: {r.stderr.strip()}']
    if not problems:
        start = r.stdout.index('<div class="timeline">')
        start = r.stdout.index('<script type="application/json">', start) + len('<script type="application/json">')
        data = json.loads(r.stdout[start:r.stdout.index('</script>', start)])
        s = data['steps'][0]
        bars = len(s['bars']) // 6
        counted = sum(s['bars'][i + 5] for i in range(0, len(s['bars']), 6))
        if bars > 20000 or counted != 200001 or s['events'] != 200001 or s['merged'] < 180000:
            problems.append(f'{bars} bars counting {counted} events, said {s["events"]}, merged {s["merged"]}')
        if len(r.stdout) > 8 << 20:
            problems.append(f'the page is {len(r.stdout)} bytes')
    # 2,000 threads with an event each in the step: 256 lanes drawn, the rest counted.
    evs = [{'ph': 'X', 'name': 'ProfilerStep#1', 'cat': 'user_annotation', 'pid': 1, 'tid': 1, 'ts': 0, 'dur': 1000}]
    evs += [{'ph': 'X', 'name': 'aten::op', 'cat': 'cpu_op', 'pid': 1, 'tid': 10 + k, 'ts': 1, 'dur': 5}
            for k in range(2000)]
    with open(trace, 'w') as f:
        json.dump({'schemaVersion': 1, 'traceEvents': evs}, f)
    r = run(binary, 'analyze', '--format', 'html', trace)
    start = r.stdout.index('<script type="application/json">', r.stdout.index('<div class="timeline">')) + 32
    s = json.loads(r.stdout[start:r.stdout.index('</script>', start)])['steps'][0]
    if len(s['lanes']) != 256 or s['left_out'] != 2001 - 256:
        problems.append(f'{len(s["lanes"])} lanes drawn, {s["left_out"]} said left out of 2,001')
    # 40,000 launches and their kernels: the critical path's stretches and the gaps bounded
    # too, and the path still tiles the step.
    evs = [{'ph': 'X', 'name': 'ProfilerStep#1', 'cat': 'user_annotation', 'pid': 1, 'tid': 1, 'ts': 0, 'dur': 200000}]
    for k in range(40000):
        evs.append({'ph': 'X', 'name': 'cudaLaunchKernel', 'cat': 'cuda_runtime', 'pid': 1, 'tid': 1, 'ts': 1 + k * 5,
                    'dur': 2, 'args': {'correlation': k + 1}})
        evs.append({'ph': 'X', 'name': 'kern', 'cat': 'kernel', 'pid': 0, 'tid': 7, 'ts': 3.5 + k * 5, 'dur': 2,
                    'args': {'correlation': k + 1, 'device': 0, 'stream': 7}})
    with open(trace, 'w') as f:
        json.dump({'schemaVersion': 1, 'traceEvents': evs}, f)
    r = run(binary, 'analyze', '--format', 'html', trace)
    start = r.stdout.index('<script type="application/json">', r.stdout.index('<div class="timeline">')) + 32
    s = json.loads(r.stdout[start:r.stdout.index('</script>', start)])['steps'][0]
    cr = s['critical']
    spans = [(cr[i + 1], cr[i + 2]) for i in range(0, len(cr), 6)]
    if len(spans) > 20000 or len(s['gaps']) // 5 > 20000 or spans[0][0] != 0 or spans[-1][1] != s['length'] or \
            any(a[1] != b[0] for a, b in zip(spans, spans[1:])):
        problems.append(f'{len(spans)} critical stretches, {len(s["gaps"]) // 5} gaps; tiling the step: '
                        f'{all(a[1] == b[0] for a, b in zip(spans, spans[1:]))}')
    c.report('timeline: 200,000 events in a step drawn as at most 20,000 bars that count them; 256 of 2,001 lanes; '
             '40,000 launches: 20,000 stretches and gaps at most',
             problems)


INSIDE_BAND = r'''(function (i) {
  var g = document.querySelector(".sites polygon.site[data-i='" + i + "']");
  g.scrollIntoView({block: "center"});
  var pts = g.points, n = pts.numberOfItems / 2, best = 0, at = null;
  for (var i = 0; i + 1 < n; i += 2) {
    var top = pts.getItem(i), bottom = pts.getItem(pts.numberOfItems - 1 - i);
    if (bottom.y - top.y > best) { best = bottom.y - top.y; at = [(pts.getItem(i).x + pts.getItem(i + 1).x) / 2, (top.y + bottom.y) / 2]; }
  }
  var m = g.getScreenCTM();
  return [m.a * at[0] + m.c * at[1] + m.e, m.b * at[0] + m.d * at[1] + m.f]; })'''


def check_sites(c, binary, browser, tmp, snapshot, screenshot=None):
    """A snapshot's memory over time by site: a band per series `--format json` lists, and
    a click on a band or a name shows that site's stack."""
    name = os.path.basename(snapshot).split('.')[0]
    r = run(binary, 'analyze', '--format', 'html', snapshot)
    j = run(binary, 'analyze', '--format', 'json', snapshot)
    if r.returncode or j.returncode:
        return c.report(f'sites {name}', [f'exit {r.returncode}/{j.returncode}'])
    series = json.loads(j.stdout)['site_series']
    page = os.path.join(tmp, name + '.html')
    with open(page, 'w') as f:
        f.write(r.stdout)
    problems = []
    with opened(browser, os.path.join(tmp, 'profile-sites'), page, problems, width=1400, height=1000) as p:
        bands = p.eval('document.querySelectorAll(".sites polygon.site").length')
        if bands != len(series):
            problems.append(f'{bands} bands, JSON has {len(series)} series')
        shown_sites = p.eval('JSON.parse(document.querySelector(".sites script").textContent)')
        if sorted(x['site'] for x in shown_sites) != sorted(x['site'] for x in series):
            problems.append('the page\'s sites are not the JSON\'s')
        # a point inside the band of the site holding most at the peak, where it is tallest
        want = max(series, key=lambda x: (not x['site'].startswith('['), x['peak_bytes']))
        i = [x['site'] for x in shown_sites].index(want['site'])
        x, y = p.eval(INSIDE_BAND + f'({i})')
        p.mouse('mouseMoved', x, y)
        p.mouse('mousePressed', x, y, button='left', buttons=1, clickCount=1)
        p.mouse('mouseReleased', x, y, button='left', buttons=0, clickCount=1)
        shown = p.eval('document.querySelector(".sites pre.stack").textContent').split('\n')
        if shown[0] != want['site']:
            problems.append(f'a click on the band of {want["site"]!r} shows {shown[0]!r}')
        if want['stack'] and shown[1] != want['stack'].split(' <- ')[0]:
            problems.append(f'its stack starts {shown[1]!r}, JSON {want["stack"][:80]!r}')
        if p.eval('document.querySelectorAll(".sites .on").length') != 2:
            problems.append('the band and its name are not both marked')
        if len(series) > 2:
            p.click('.sites .legend button[data-i="2"]')
            if p.eval('document.querySelector(".sites").dataset.shown') != '2':
                problems.append('a click on a name did not show its site')
        if screenshot:
            p.screenshot(screenshot, selector='.sites', full_width=True)
    c.report(f'memory by site over time {name}: {len(series)} series', problems)


def check_trace_sites(c, binary, trace):
    """A trace's memory by operator over time, at the peak, against a replay of the trace's
    [memory] events: the operators' series hold the trace's own allocations live there
    (frees matched by address, one without an address never freed), the series from
    before the trace the rest of Total Allocated; the named series are the memory table's
    operators holding most at the peak."""
    name = os.path.basename(trace).split('.')[0]
    j = run(binary, 'analyze', '--format', 'json', trace)
    doc = json.loads(j.stdout)
    problems = []
    by_device = collections.defaultdict(list)
    for e in read_events(trace):
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        if e.get('ph') == 'i' and e.get('name') == '[memory]' and 'Bytes' in a:
            by_device[(a.get('Device Type'), a.get('Device Id'))].append((ns(e['ts']), a))
    for m in doc['memory']:
        dev = m['device']
        key = (0, -1) if dev == 'cpu' else (1, int(dev.split(':')[1]))
        evs = sorted(by_device.get(key) or by_device.get((0, 0), []) if dev == 'cpu' else by_device[key],
                     key=lambda x: x[0])
        if not evs:
            continue
        live, tracked, peak, at_peak = {}, 0, None, None
        for ts, a in evs:
            b, addr = int(a['Bytes']), a.get('Addr')
            if b > 0:
                if addr:
                    live[addr] = b
                tracked += b
            elif b < 0 and addr in live:
                tracked -= live.pop(addr)
            level = int(a['Total Allocated'])
            if peak is None or level > peak:
                peak, at_peak = level, tracked
        series = {s['site']: s['peak_bytes'] for s in m['site_series']}
        before = series.pop('[allocated before the trace]', 0)
        if peak != m['peak_bytes'] or sum(series.values()) != at_peak or before != peak - at_peak:
            problems.append(f'{dev}: peak {m["peak_bytes"]} (replay {peak}), the trace\'s own '
                            f'{sum(series.values())} (replay {at_peak}), before {before} (replay {peak - at_peak})')
        series.pop('[other sites]', None)
        ops = {o['name']: o['live_bytes'] for o in m['top_operators'] if o['live_bytes'] > 0}
        top = sorted(ops, key=lambda k: -ops[k])[:12]
        if series != {k: ops[k] for k in top}:
            problems.append(f'{dev}: series {sorted(series.items())[:3]} != the table\'s {[(k, ops[k]) for k in top][:3]}')
    c.report(f'memory by operator over time {name}: {len(doc["memory"])} devices', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--screenshot', help="a PNG of lm_train's timeline")
    ap.add_argument('--sites-screenshot', help="a PNG of a snapshot's memory by site over time")
    a = ap.parse_args()
    c = Tally()
    browser = chromium()
    if not browser:
        print('FAIL chromium not found: scripts/install-deps.sh installs it')
        return 1
    d = os.path.join(a.testdata, 'real', 'torch211')
    with tempfile.TemporaryDirectory() as tmp:
        for name in ('lm_train', 'multistream', 'ddp_gloo_2ranks_rank0', 'resnet50_dl'):
            check_timeline_file(c, a.binary, tmp, os.path.join(d, name + '.pt.trace.json.gz'))
        check_bounded(c, a.binary, tmp)
        check_refusals(c, a.binary, tmp, os.path.join(d, 'lm_train.pt.trace.json.gz'),
                       os.path.join(a.testdata, 'snapshots', 'oom_train.pickle.gz'))
        check_page(c, a.binary, browser, tmp, os.path.join(d, 'lm_train.pt.trace.json.gz'), a.screenshot)
        for name in ('multistream', 'ddp_gloo_2ranks_rank0'):
            check_page(c, a.binary, browser, tmp, os.path.join(d, name + '.pt.trace.json.gz'))
        check_sites(c, a.binary, browser, tmp, os.path.join(a.testdata, 'snapshots', 'oom_train.pickle.gz'),
                    a.sites_screenshot)
        for name in ('lm_train', 'resnet50_dl'):
            check_trace_sites(c, a.binary, os.path.join(d, name + '.pt.trace.json.gz'))
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
