#!/usr/bin/env python3
"""compare --format html in headless Chromium, driven through the DevTools protocol.

Pairs: HTA's trace_compare pair, two DDP ranks of torch 2.11, two memory snapshots.
Checked, against values computed independently:
- the page opens offline with no console message; its title line is `--format json`'s
  headline (the change, first), and the verdict follows it;
- the differential flame graph's roots: a trace's device time per step is the sum of
  its kernel, memcpy and memset durations in the trace text over the analysed steps
  (JSON's step counts), in each run; a snapshot's memory in use is the peaks `--format
  json` gives per device, summed;
- each frame is red where the new run's value is larger and blue where smaller (grey
  under 0.1% of the root), as the page's own data says;
- a user's actions: hovering a frame shows both runs' values, the width select switches
  to the base run's values, search counts matches, a click zooms;
- every table holds the rows `--format json` has.
With --screenshot PNG, the DDP pair's page is written there.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import opened  # noqa: E402
from e2e_common import Tally, ns, read_events  # noqa: E402
from html_e2e import chromium  # noqa: E402

DEVICE_CATS = {'kernel', 'gpu_memcpy', 'gpu_memset'}


def device_ns(trace):
    evs = read_events(trace)
    return sum(ns(e['dur']) for e in evs if e.get('ph') == 'X' and e.get('cat') in DEVICE_CATS
               and e.get('dur') is not None), sum(1 for e in evs if e.get('cat') in DEVICE_CATS)


def check(c, binary, browser, tmp, base, new, snapshot=False, screenshot=None):
    name = os.path.basename(base).split('.')[0] + ' vs ' + os.path.basename(new).split('.')[0]
    r = subprocess.run([binary, 'compare', '--format', 'html', base, new], capture_output=True, text=True)
    j = subprocess.run([binary, 'compare', '--format', 'json', base, new], capture_output=True, text=True)
    if r.returncode or j.returncode:
        return c.report(name, [f'exit {r.returncode}/{j.returncode}: {r.stderr.strip()}'])
    report = json.loads(j.stdout, parse_float=Decimal)
    page = os.path.join(tmp, 'compare.html')
    with open(page, 'w') as f:
        f.write(r.stdout)
    problems = []
    with opened(browser, os.path.join(tmp, 'profile'), page, problems, width=1400, height=1000) as p:
        if p.eval('document.body.dataset.ready') != '1' or p.eval('document.body.dataset.errors'):
            problems.append(f'script did not finish: {p.eval("document.body.dataset.errors")}')
        h1 = p.eval('document.querySelector("h1").textContent')
        if not h1.endswith(report['headline']):
            problems.append(f'title {h1!r} is not the headline {report["headline"]!r}')
        first = p.eval('document.querySelector("main section").id')
        if first != 'verdict':
            problems.append(f'the page opens with {first}, not the verdict')
        if screenshot:  # as it opens
            p.screenshot(screenshot)
        data = p.eval('JSON.parse(document.querySelector(".flame script").textContent)')
        if snapshot:
            want = {'inuse_space': (sum(d['base_peak_bytes'] for d in report['devices']),
                                    sum(d['new_peak_bytes'] for d in report['devices']))}
            slack = 0
        else:
            (b_ns, b_n), (n_ns, n_n) = device_ns(base), device_ns(new)
            steps = report['steps']
            want = {'gpu': (b_ns // steps['base']['steps'], n_ns // steps['new']['steps'])}
            slack = max(b_n, n_n)  # each sample divided by the step count, rounded
        for t, (wb, wn) in want.items():
            k = data['types'].index(t)
            gb, gn = data['base'][k][0], data['total'][k][0]
            if abs(gb - wb) > slack or abs(gn - wn) > slack:
                problems.append(f'{t} roots base {gb} new {gn}, from the inputs {wb} {wn}')
        # colours as the data says
        colours = p.eval('''(function () {
          var out = [];
          document.querySelectorAll(".flame .f").forEach(function (d) {
            out.push([+d.dataset.node, getComputedStyle(d).backgroundColor]);
          });
          return out; })()''')
        k = 0
        root = max(data['base'][k][0], data['total'][k][0])
        wrong = 0
        for node, css in colours[:400]:
            bv, nv = data['base'][k][node], data['total'][k][node]
            r_, g_, b_ = [int(x) for x in css[css.index('(') + 1:css.index(')')].split(',')[:3]]
            if abs(nv - bv) < 0.001 * root:
                ok = r_ == g_ == b_
            elif nv > bv:
                ok = r_ > b_
            else:
                ok = b_ > r_
            wrong += not ok
        if wrong:
            problems.append(f'{wrong} of {min(len(colours), 400)} frames coloured against their change')
        # a user's actions
        p.hover('.flame .graph', 100, 8)
        title = p.eval('document.querySelector(".flame .f").title')
        if '\u2192' not in title:
            problems.append(f'a frame\'s tooltip has no base -> new: {title[:120]!r}')
        info0 = p.eval('document.querySelector(".flame .info").textContent')
        p.select('.flame select.side', 1)
        info1 = p.eval('document.querySelector(".flame .info").textContent')
        if info0 == info1:
            problems.append(f'the width select changed nothing: {info1!r}')
        p.type('.flame input[type=search]', '.')
        if 'matching frames' not in p.eval('document.querySelector(".flame .match").textContent'):
            problems.append('search counted nothing')
        p.type('.flame input[type=search]', '')
        frames = p.eval('document.querySelectorAll(".flame .f").length')
        if frames > 2:
            p.click('.flame .f:nth-child(3)')
            if p.eval('document.querySelector(".flame .graph").dataset.root') == '0':
                problems.append('a click did not zoom')
        # tables hold the JSON's rows
        if not snapshot:
            for table, rows in (('operators-table', report['operators']), ('kernels-table', report['kernels'])):
                n = p.eval(f'document.querySelectorAll("#{table} tbody tr").length')
                if n != len(rows):
                    problems.append(f'{table}: {n} rows, JSON {len(rows)}')
        else:
            n = p.eval('document.querySelectorAll("#sites-table tbody tr").length')
            if n != len(report['sites']):
                problems.append(f'sites-table: {n} rows, JSON {len(report["sites"])}')
    c.report(f'compare html {name}', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--screenshot')
    a = ap.parse_args()
    c = Tally()
    browser = chromium()
    if not browser:
        print('FAIL chromium not found: scripts/install-deps.sh installs it')
        return 1
    real = os.path.join(a.testdata, 'real')
    with tempfile.TemporaryDirectory() as tmp:
        check(c, a.binary, browser, tmp, os.path.join(real, 'hta__trace_compare__base__base.json.gz'),
              os.path.join(real, 'hta__trace_compare__test__test.json.gz'))
        check(c, a.binary, browser, tmp, os.path.join(real, 'torch211', 'ddp_gloo_4ranks_late2_rank0.pt.trace.json.gz'),
              os.path.join(real, 'torch211', 'ddp_gloo_4ranks_late2_rank2.pt.trace.json.gz'), screenshot=a.screenshot)
        snaps = os.path.join(a.testdata, 'snapshots')
        check(c, a.binary, browser, tmp, os.path.join(snaps, 'oom_train.pickle.gz'),
              os.path.join(snaps, 'long_train.pickle.gz'), snapshot=True)
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
