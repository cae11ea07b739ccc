#!/usr/bin/env python3
"""The HTML report's flame graph in headless Chromium.

`analyze --format html` of real traces and a snapshot, opened from disk with a probe
appended that clicks a frame, searches and switches the value shown, and writes what the
page then shows on <body> (as tests/e2e/html_e2e.py does for the tables). Checked:
- the page runs offline to the end with no console message, and draws the graph;
- the graph holds the model: a frame of the script (`gen_traces.py:N`) with a kernel of
  the trace (a name from `--format json`'s kernels) under it, and device time there;
- a click zooms into the frame (it becomes the graph's full width), search marks frames
  and gives their share, the select switches to host work;
- the values are convert's: each type's root equals the sum `go tool pprof` gives the
  profile convert writes of the same trace (gpu, work);
- gpt2_big's page (194 MB of JSON) stays under 12 MB and renders;
- names a user's code chooses (`</script>`, `<!--<script>`, `-->`, `&`, U+2028, U+2029) in
  an operator, a Python function and an annotation: every section and the flame graph
  are on the page, the names shown as written, and no script of theirs runs.
With --screenshot PNG, lm_train's graph is written there (the README's picture).

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import html
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402
from html_e2e import WIDTH, browse, chromium  # noqa: E402

PROBE = r"""<script>
(function () {
  var d = document.body.dataset, box = document.querySelector(".flame");
  if (!box) { d.flame = "none"; return; }
  var g = box.querySelector(".graph"), data = JSON.parse(box.querySelector("script").textContent);
  d.frames0 = g.dataset.frames;
  var top = g.querySelector(".f");
  d.topTitle = top.title;
  var chains = box.querySelector(".chain");
  chains.click();  // off: the root alone on the first row
  d.topOff = g.querySelector(".f").title.split("\n")[0] + "|" + g.querySelector(".f").textContent;
  chains.click();
  var divs = Array.prototype.slice.call(g.querySelectorAll(".f"));
  var py = divs.filter(function (x) { return /\.py:\d+/.test(x.title.split("\n")[0]) && x.offsetWidth > 40 && +x.dataset.node > 0; });
  if (py.length) {
    var t = py[py.length > 3 ? 3 : py.length - 1];
    d.clicked = t.dataset.node;
    t.click();
    d.root1 = g.dataset.root;
    var first = Array.prototype.filter.call(g.querySelectorAll(".f"), function (x) { return x.className.indexOf("up") < 0; })[0];
    d.firstNode = first.dataset.node;
    d.firstWidth = first.offsetWidth;
    d.graphWidth = g.clientWidth;
    box.querySelector("button").click();
    d.root2 = g.dataset.root;
  }
  var s = box.querySelector("input");
  s.value = ".py:";
  s.dispatchEvent(new Event("input"));
  d.hits = g.querySelectorAll(".f.hit").length;
  d.match = box.querySelector(".match").textContent;
  // A regular expression, as pprof's -focus takes one (lower case: the search ignores case).
  s.value = "aten::(mm|addmm)|\\.PY:";
  s.dispatchEvent(new Event("input"));
  d.reHits = g.querySelectorAll(".f.hit").length;
  s.value = ".py:";
  s.dispatchEvent(new Event("input"));
  var sel = box.querySelector("select");
  var work = data.types.indexOf("work");
  if (work >= 0) { sel.value = String(work); sel.dispatchEvent(new Event("change")); }
  d.info = box.querySelector(".info").textContent;
  d.match2 = box.querySelector(".match").textContent;
  // What a drawn frame says: its label (the tables' name) where it is wide enough.
  var drawn = Array.prototype.slice.call(g.querySelectorAll(".f"));
  d.wide = drawn.filter(function (x) { return x.offsetWidth > 14; }).length;
  d.labelled = drawn.filter(function (x) { return x.textContent.length > 0; }).length;
  d.graphWidth2 = g.clientWidth;
  d.overflow = document.documentElement.scrollWidth - window.innerWidth;
})();
</script>
"""


def body_of(dom):
    m = re.search(r'<body([^>]*)>', dom)
    return {k: html.unescape(v) for k, v in re.findall(r'([a-z0-9-]+)="([^"]*)"', m.group(1))} if m else {}


def flame_data(page):
    m = re.search(r'<div class="flame">.*?<script type="application/json">(.*?)</script>', page, re.S)
    return json.loads(m.group(1).replace('<\\/', '</')) if m else None


def pprof_total(binary, trace, tmp, sample):
    out = os.path.join(tmp, 'p.pb.gz')
    subprocess.run([binary, 'convert', '--quiet', trace, out], check=True)
    r = subprocess.run(['go', 'tool', 'pprof', '-raw', out], capture_output=True, text=True, check=True)
    types = re.search(r'PeriodType.*?\nSamples:\n(.*?)\n', r.stdout, re.S).group(1).split()
    col = [t.split('/')[0] for t in types].index(sample)
    total = 0
    rows = r.stdout.split('\nSamples:\n', 1)[1].split('\nLocations', 1)[0].split('\n')[1:]
    for row in rows:
        fields = row.split(':')[0].split()
        if len(fields) == len(types) and all(re.fullmatch(r'-?\d+', x) for x in fields):
            total += int(fields[col])
    return total


def check(tally, binary, browser, tmp, trace, screenshot=None, max_mb=None, model=True):
    name = os.path.basename(trace).split('.')[0]
    problems = []
    r = subprocess.run([binary, 'analyze', '--quiet', '--format', 'html', trace], capture_output=True, text=True)
    if r.returncode:
        return tally.report(name, [f'exit {r.returncode}: {r.stderr[:200]}'])
    size_mb = len(r.stdout.encode()) / 1e6
    if max_mb and size_mb > max_mb:
        problems.append(f'page of {size_mb:.1f} MB')
    data = flame_data(r.stdout)
    if not data:
        return tally.report(name, ['no flame graph'])
    page = os.path.join(tmp, name + '.html')
    with open(page, 'w') as f:
        f.write(r.stdout.replace('</body>', PROBE + '</body>'))
    b, console = browse(browser, page, os.path.join(tmp, 'profile'), '--dump-dom')
    d = body_of(b.stdout)
    if b.returncode or console:
        problems.append(f'chromium exit {b.returncode}, console {console[:1]}')
    if d.get('data-ready') != '1' or d.get('data-errors'):
        problems.append(f'script did not finish: {d.get("data-errors")}')
    if int(d.get('data-frames0', '0')) < 20:
        problems.append(f'{d.get("data-frames0")} frames drawn')
    if d.get('data-clicked') is None or d.get('data-root1') != d.get('data-clicked') or \
            d.get('data-first-node') != d.get('data-clicked') or \
            abs(int(d.get('data-first-width', 0)) - int(d.get('data-graph-width', 1))) > 2 or d.get('data-root2') != '0':
        problems.append(f'click: {({k: v for k, v in d.items() if k.startswith(("data-clicked", "data-root", "data-first", "data-graph"))})}')
    if int(d.get('data-hits', '0')) == 0 or '%' not in d.get('data-match', ''):
        problems.append(f'search: {d.get("data-hits")} hits, {d.get("data-match")!r}')
    if 'work' in data['types'] and not d.get('data-info', '').endswith(' work'):
        problems.append(f'select: {d.get("data-info")!r}')
    # The first row: the chain of frames from the root with one caller each holding all
    # of its value, as the tree says, one row; with the box unticked, the root alone.
    t0 = data['total'][0]
    kids = {}
    for i in range(1, len(data['parent'])):
        kids.setdefault(data['parent'][i], []).append(i)
    chain, i = ['all'], 0
    while True:
        live = [c for c in kids.get(i, []) if t0[c] > 0]
        if len(live) != 1 or t0[live[0]] != t0[i]:
            break
        i = live[0]
        chain.append(data['names'][data['name'][i]])
    if d.get('data-top-title', '').split('\n')[:-1] != chain:
        problems.append(f'first row {d.get("data-top-title", "").split(chr(10))[:-1]} != chain {chain}')
    if d.get('data-top-off') != 'all|all':
        problems.append(f'chains off: first row {d.get("data-top-off")!r}')
    if int(d.get('data-re-hits', '0')) < int(d.get('data-hits', '0')):
        problems.append(f'regex search: {d.get("data-re-hits")} hits, fewer than ".py:" alone ({d.get("data-hits")})')
    # After switching the value, the count is of frames holding some of it.
    m2 = re.match(r'(\d+) matching frames hold (\S+ ?\S*) ', d.get('data-match2', ''))
    if m2 and int(m2.group(1)) > 0 and m2.group(2).startswith('0 '):
        problems.append(f'stale count after switching: {d.get("data-match2")!r}')
    if int(d.get('data-labelled', '0')) < int(d.get('data-wide', '1')):
        problems.append(f'{d.get("data-labelled")} of {d.get("data-wide")} frames wider than 14 px labelled')
    if int(d.get('data-graph-width2', '0')) < WIDTH - 80:  # main's column alone is 1,184 px
        problems.append(f'the graph is {d.get("data-graph-width2")} px wide in a {WIDTH} px window')
    # Labels are the tables' names: a kernel's label has no argument list.
    for n, l in zip(data['names'], data.get('labels', [])):
        if l and ('(' in l and l.endswith(')') and not l.startswith('[')):
            problems.append(f'label {l[:80]!r} of {n[:80]!r} keeps its arguments')
            break
    if int(d.get('data-overflow', '1')) > 0:
        problems.append(f'page {d.get("data-overflow")} px wider than the window')
    if model:
        # A frame of the script with one of the trace's kernels under it, holding device time.
        j = json.loads(subprocess.run([binary, 'analyze', '--quiet', '--format', 'json', trace], capture_output=True,
                                      text=True).stdout)
        kernels = {k['name'] for k in j['kernels']}
        names = [data['names'][i] for i in data['name']]
        gpu = data['total'][data['types'].index('gpu')]
        under_script = False
        for i in range(1, len(names)):
            if names[i] in kernels and gpu[i] > 0:
                a = data['parent'][i]
                while a:
                    if re.search(r'gen_traces\.py:\d+$', names[a]):
                        under_script = True
                        break
                    a = data['parent'][a]
            if under_script:
                break
        if not under_script:
            problems.append('no kernel of the trace under a frame of its script')
        for sample in ('gpu', 'work'):
            want = pprof_total(binary, trace, tmp, sample)
            got = data['total'][data['types'].index(sample)][0]
            if got != want:
                problems.append(f'{sample}: the graph holds {got}, pprof {want}')
    if screenshot and not problems:
        plain = os.path.join(tmp, name + '.plain.html')
        with open(plain, 'w') as f:  # the graph alone
            f.write(r.stdout.replace('</head>', '<style>header,nav,section:not(#profile){display:none}</style></head>'))
        s, _ = browse(browser, plain, os.path.join(tmp, 'profile'), f'--screenshot={screenshot}',
                      '--hide-scrollbars', '--window-size=1280,760')
        if s.returncode or os.path.getsize(screenshot) < 20000:
            problems.append(f'screenshot: exit {s.returncode}')
    tally.report(f'{name}: flame graph of {len(data["parent"])} frames ({size_mb:.1f} MB page), '
                 f'{d.get("data-frames0")} drawn; click, search, switch', problems)


NAMES_PROBE = r"""<script>
(function () {
  var d = document.body.dataset, g = document.querySelector(".flame .graph");
  d.sections = Array.prototype.map.call(document.querySelectorAll("section[id]"), function (x) { return x.id; }).join(" ");
  d.frames0 = g ? g.dataset.frames : "0";
  d.titles = g ? JSON.stringify(Array.prototype.map.call(g.querySelectorAll(".f"), function (x) { return x.title.split("\n")[0]; })) : "[]";
})();
</script>
"""

PAYLOADS = ['</script><script>document.body.dataset.pwned=1</script>', '<!--<script>', '-->x<!--', 'a & b &amp; <c>',
            'line\u2028sep\u2029par', '<script>document.body.dataset.pwned=1</script>']


def payload_trace(name):
    """A small trace whose operator, Python function and annotation carry `name`."""
    ev = [{'ph': 'X', 'cat': 'user_annotation', 'name': 'ProfilerStep#1', 'pid': 1, 'tid': 1, 'ts': 0, 'dur': 1000},
          {'ph': 'X', 'cat': 'python_function', 'name': f'train.py(3): {name}', 'pid': 1, 'tid': 1, 'ts': 10,
           'dur': 900, 'args': {'Python id': 1, 'Python parent id': 0}},
          {'ph': 'X', 'cat': 'user_annotation', 'name': name, 'pid': 1, 'tid': 1, 'ts': 20, 'dur': 800},
          {'ph': 'X', 'cat': 'cpu_op', 'name': name, 'pid': 1, 'tid': 1, 'ts': 30, 'dur': 700},
          {'ph': 'X', 'cat': 'cpu_op', 'name': 'aten::add', 'pid': 1, 'tid': 1, 'ts': 40, 'dur': 100}]
    return json.dumps({'traceEvents': ev}, ensure_ascii=False)


def hostile_names(tally, binary, browser, tmp):
    for i, name in enumerate(PAYLOADS):
        problems = []
        trace = os.path.join(tmp, f'names{i}.json')
        with open(trace, 'w', encoding='utf-8') as f:
            f.write(payload_trace(name))
        r = subprocess.run([binary, 'analyze', '--quiet', '--format', 'html', trace], capture_output=True, text=True)
        if r.returncode:
            tally.report(f'name {name!r}', [f'exit {r.returncode}: {r.stderr[:200]}'])
            continue
        sections = re.findall(r'<section id="([^"]+)"', r.stdout)
        page = os.path.join(tmp, f'names{i}.html')
        with open(page, 'w', encoding='utf-8') as f:
            f.write(r.stdout.replace('</body>', NAMES_PROBE + '</body>'))
        b, console = browse(browser, page, os.path.join(tmp, 'profile'), '--dump-dom')
        d = body_of(b.stdout)
        if b.returncode or console:
            problems.append(f'chromium exit {b.returncode}, console {console[:1]}')
        if d.get('data-ready') != '1' or d.get('data-errors'):
            problems.append('the page\'s script did not finish: ' + str(d.get('data-errors')))
        if d.get('data-pwned'):
            problems.append('a script from the trace ran')
        if len(sections) < 3 or d.get('data-sections', '').split() != sections:
            problems.append(f'sections {d.get("data-sections")!r}, the page writes {sections}')
        titles = json.loads(d.get('data-titles', '[]'))
        if int(d.get('data-frames0', '0')) < 3 or not any(name in t for t in titles):
            problems.append(f'{d.get("data-frames0")} frames drawn; none named {name!r}: {titles[:6]}')
        tally.report(f'a name {name[:30]!r}: every section ({len(sections)}) and the flame graph, shown as written',
                     problems)


def pprof_focus(binary, trace, tmp, sample, name):
    """What `go tool pprof -focus '^NAME$'` keeps of a sample type: the samples with the
    frame anywhere in their stack, each once (the frame's total over all its callers)."""
    out = os.path.join(tmp, 'focus.pb.gz')
    subprocess.run([binary, 'convert', '--quiet', trace, out], check=True)
    r = subprocess.run(['go', 'tool', 'pprof', '-top', '-nodecount=1000000', '-unit=ns', f'-sample_index={sample}',
                        '-focus=^' + re.escape(name) + '$', out], capture_output=True, text=True, check=True)
    m = re.search(r'accounting for ([0-9.]+)ns', r.stdout)
    return int(float(m.group(1))) if m else 0


FIND_MM = r'''(function () {
  var best = null;
  document.querySelectorAll(".flame .f").forEach(function (d) {
    if (d.title.split("\n")[0] === "aten::mm" && (!best || d.offsetWidth > best.offsetWidth)) best = d;
  });
  if (!best) return null;
  best.id = "probe-mm";
  return best.offsetWidth; })()'''

FIND_CALLER = r'''(function () {
  var named = [];
  document.querySelectorAll(".flame .f").forEach(function (d) { if (d.dataset.name && d.offsetWidth > 30) named.push(d); });
  if (!named.length) return null;
  named[0].id = "probe-caller";
  return named[0].dataset.name; })()'''


def sandwich(tally, binary, browser, tmp, trace):
    """The sandwich, through the DevTools protocol: a right click on a frame of aten::mm
    (the double click's timing is not a test's to meet on a loaded machine) shows it merged
    over all its callers, its row the total pprof's -focus gives; then the box and the
    search reach the same."""
    from cdp import opened
    problems = []
    r = subprocess.run([binary, 'analyze', '--quiet', '--format', 'html', trace], capture_output=True, text=True)
    page = os.path.join(tmp, 'sandwich.html')
    with open(page, 'w') as f:
        f.write(r.stdout)
    want = pprof_focus(binary, trace, tmp, 'gpu', 'aten::mm')
    rows = 0
    with opened(browser, os.path.join(tmp, 'cdp-profile'), page, problems, width=WIDTH, height=1200) as p:
        if not p.eval(FIND_MM):
            return tally.report('sandwich', ['no aten::mm frame drawn'])
        p.right_click('#probe-mm')
        got = p.eval('document.querySelector(".flame .graph").dataset.sandwich')
        if got is None:
            problems.append('a right click did not open the sandwich')
        elif not (0.97 * want <= int(got) <= want):
            problems.append(f'the sandwich holds {got} ns of gpu, pprof -focus {want}')
        rows = p.eval('document.querySelectorAll(".flame .f").length')
        caller = p.eval(FIND_CALLER)
        if caller:
            p.click('#probe-caller')
            q = p.eval('document.querySelector(".flame input[type=search]").value')
            if caller not in q.replace('\\', ''):
                problems.append(f'clicking {caller!r} searched {q!r}')
        else:
            problems.append('no caller or callee drawn')
        # the box off, then on with the search typed: the same total
        p.click('.flame .sandwich')
        p.type('.flame input[type=search]', '^aten::mm$')
        p.click('.flame .sandwich')
        if p.eval('document.querySelector(".flame .graph").dataset.sandwich') != got:
            problems.append('the box and the search give another total')
    tally.report(f'sandwich: aten::mm over all its callers ({rows} frames)', problems)


def ranks_flame(tally, binary, browser, tmp, traces):
    """The multi-rank report's flame graph: a frame per rank holding that rank's device
    time (its kernel, memcpy and memset durations in the trace text), and the straggler's
    link zooms into its frame (a click through the DevTools protocol)."""
    from cdp import opened
    from e2e_common import ns, read_events
    problems = []
    r = subprocess.run([binary, 'analyze', '--quiet', '--format', 'html'] + traces, capture_output=True, text=True)
    page = os.path.join(tmp, 'ranks.html')
    with open(page, 'w') as f:
        f.write(r.stdout)
    want = {}
    for t in traces:
        evs = read_events(t)
        with_rank = json.loads(subprocess.run([binary, 'analyze', '--format', 'json', t], capture_output=True,
                                              text=True).stdout)['trace'].get('rank')
        want[f'rank {with_rank}'] = sum(ns(e['dur']) for e in evs if e.get('ph') == 'X' and e.get('dur') is not None
                                       and e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset'))
    with opened(browser, os.path.join(tmp, 'cdp-ranks'), page, problems, width=WIDTH, height=1200) as p:
        data = p.eval('JSON.parse(document.querySelector(".flame script").textContent)')
        gpu = data['types'].index('gpu')
        got = {data['names'][data['name'][i]]: data['total'][gpu][i] for i in range(1, len(data['parent']))
               if data['parent'][i] == 0}
        if got != want:
            problems.append(f'rank frames {got} != the traces\' device time {want}')
        link = p.eval('(function () { var a = document.querySelector("a.flame-root"); return a ? a.dataset.frame : null; })()')
        if link is None:
            problems.append('no link from the straggler to its profile')
        else:
            p.click('a.flame-root')
            root = p.eval('document.querySelector(".flame .graph").dataset.root')
            if root in (None, '0') or data['names'][data['name'][int(root)]] != link:
                problems.append(f'the link to {link!r} zoomed to node {root}')
    tally.report(f'ranks: a frame per rank ({len(traces)}), the straggler linked to its own', problems)


def one_summary_flame(tally, binary, tmp, trace):
    """One rank's summary alone gives the page over ranks with its profile, as several do:
    a frame for the rank holding its device time, the same as from its trace."""
    from e2e_common import ns, read_events
    problems = []
    summary = os.path.join(tmp, 'one.summary.json')
    subprocess.run([binary, 'summarize', '--quiet', trace, '-o', summary], check=True)
    html = subprocess.run([binary, 'analyze', '--quiet', '--format', 'html', summary], capture_output=True,
                          text=True, check=True).stdout
    m = re.search(r'<script type="application/json">(\{"types".*?)</script>', html)
    data = json.loads(m.group(1)) if m else None
    want = sum(ns(e['dur']) for e in read_events(trace)
               if e.get('ph') == 'X' and e.get('dur') is not None and e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset'))
    if not data:
        problems.append('no profile on the page of one summary')
    else:
        gpu = data['types'].index('gpu')
        tops = [(data['names'][data['name'][i]], data['total'][gpu][i]) for i in range(1, len(data['parent']))
                if data['parent'][i] == 0]
        if len(tops) != 1 or not tops[0][0].startswith('rank ') or tops[0][1] != want:
            problems.append(f'frames under the root {tops}, want one rank frame of {want} ns')
    tally.report('one summary: its rank\'s profile, as from its trace', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--no-shared', action='store_true')
    ap.add_argument('--screenshot', help="a PNG of lm_train's graph")
    a = ap.parse_args()
    c = Tally()
    browser = chromium()
    if not browser:
        print('FAIL chromium not found: scripts/install-deps.sh installs it')
        return 1
    d = os.path.join(a.testdata, 'real', 'torch211')
    with tempfile.TemporaryDirectory() as tmp:
        hostile_names(c, a.binary, browser, tmp)
        sandwich(c, a.binary, browser, tmp, os.path.join(d, 'lm_train.pt.trace.json.gz'))
        ranks_flame(c, a.binary, browser, tmp,
                    [os.path.join(d, f'ddp_gloo_4ranks_late2_rank{r}.pt.trace.json.gz') for r in range(4)])
        one_summary_flame(c, a.binary, tmp, os.path.join(d, 'ddp_gloo_2ranks_rank0.pt.trace.json.gz'))
        check(c, a.binary, browser, tmp, os.path.join(d, 'lm_train.pt.trace.json.gz'), screenshot=a.screenshot)
        check(c, a.binary, browser, tmp, os.path.join(d, 'resnet50_dl.pt.trace.json.gz'))
        check(c, a.binary, browser, tmp, os.path.join(a.testdata, 'snapshots',
                                                      'cs336__medium_ctx128_training_step.pickle.gz'), model=False)
        big = os.path.join(os.path.dirname(os.path.abspath(a.testdata)), '..', 'shared', 'traces', 'torch211',
                           'gpt2_big.pt.trace.json.gz')
        if not a.no_shared and os.path.exists(big):
            check(c, a.binary, browser, tmp, big, max_mb=12, model=False)
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
