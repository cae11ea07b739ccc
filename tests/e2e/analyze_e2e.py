#!/usr/bin/env python3
"""End-to-end tests of `torch2pprof analyze` on every trace in testdata/.

The binary's JSON is read with Python's json module (numbers as Decimal, so the
microseconds are compared exactly) and checked against the trace itself: kernel
totals and calls, and events and time per category, computed here from the trace
text (with docs/reference.md's repairs: no profiler span, Python spans clipped); and against
invariants: each step's parts sum to its total, operator self time is at most total
time. The text report must fit 120 columns and be the same for -top 50, --top 50 and
--top=50; CSV must agree with JSON.

On the torch 2.11 traces (testdata/real/torch211/), two oracles nobody here wrote:
the steps are exactly the host-side ProfilerStep events analyze keeps, and the
operator table agrees with torch's own key_averages() table written beside each trace.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import collections
import csv
import io
import json
import os
import re
import subprocess
import tempfile
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_e2e import RawText  # noqa: E402
from e2e_common import Tally, as_text, ns, python_ends, read_events  # noqa: E402

DEVICE = {'kernel', 'gpu_memcpy', 'memcpy', 'gpu_memset', 'memset', 'mtia_ccp_events'}
STEP_PARTS = ['kernel_us', 'memcpy_us', 'memset_us', 'communication_us', 'runtime_us', 'dataloader_us',
              'cpu_exec_us', 'other_us']


def model(path):
    """Per category: X events (dur >= 0) and B/E pairs, and their summed durations in us."""
    count, total = collections.Counter(), collections.Counter()
    kernels, kernel_us = 0, Decimal(0)
    open_b = collections.defaultdict(list)
    evs = [e for e in read_events(path) if isinstance(e, dict)]
    py_end = python_ends(evs)
    for k, e in enumerate(evs):
        cat = e.get('cat', '') if isinstance(e.get('cat', ''), str) else ''
        ph = e.get('ph')
        dur = None
        if ph == 'X' and 'ts' in e and e.get('dur') is not None and Decimal(str(e['dur'])) >= 0:
            if cat.lower() == 'trace':
                continue  # the profiler's own span
            dur = Decimal(str(e['dur']))
            if k in py_end and Decimal(str(e['dur'])) > 0:
                if py_end[k] is None or py_end[k] <= ns(e['ts']):
                    continue
                dur = Decimal(py_end[k] - ns(e['ts'])) / 1000
        elif ph == 'B' and 'ts' in e:
            open_b[(str(e.get('pid')), str(e.get('tid')))].append(e)
        elif ph == 'E' and 'ts' in e and open_b[(str(e.get('pid')), str(e.get('tid')))]:
            b = open_b[(str(e.get('pid')), str(e.get('tid')))].pop()
            if Decimal(str(e['ts'])) > Decimal(str(b['ts'])):
                dur, cat = Decimal(str(e['ts'])) - Decimal(str(b['ts'])), b.get('cat', '')
        if dur is None:
            continue
        count[cat] += 1
        total[cat] += dur
        if cat.lower() in ('kernel', 'mtia_ccp_events'):
            kernels += 1
            kernel_us += dur
    return count, total, kernels, kernel_us


# Operators key_averages() lists that the plugin's table leaves out by design (docs/reference.md):
# host annotations (ProfilerStep, DataLoader, record_function blocks, nccl:/gloo:), the
# wrappers Optimizer.* and (Distributed)DataParallel.forward, and everything that is no
# cpu_op (runtime calls, kernels, copies, the profiler's overhead), found from the trace.
WRAPPER = ('Optimizer.', 'DataParallel.forward', 'DistributedDataParallel.forward', 'ProfilerStep', 'enumerate(Data')
# Cells where torch's table disagrees with the trace it exported (docs/reference.md): for
# _foreach_add_ it counts a runtime call of the pin-memory thread as the operator's child
# (exactly the 9.516 us difference); for nll_loss_forward no exported event accounts for 2.6 us.
TORCH_OFF = {('resnet50_dl', 'aten::_foreach_add_', 'host_self_us'),
             ('resnet50_dl', 'aten::nll_loss_forward', 'host_self_us')}


def operators_holding_python(events):
    """Names of cpu_ops that hold a python_function on their thread (torch.compile's
    `## Call CompiledFxGraph`, `CompiledFunction`, Triton kernels' launchers), from the
    trace text: one sweep per thread in start order."""
    by_lane = collections.defaultdict(list)
    for e in events:
        if isinstance(e, dict) and e.get('ph') == 'X' and e.get('dur') is not None and 'ts' in e and \
                e.get('cat') in ('cpu_op', 'python_function'):
            s = ns(e['ts'])
            by_lane[(as_text(e.get('pid')), as_text(e.get('tid')))].append(
                (s, -(s + ns(e['dur'])), e.get('cat') == 'python_function', str(e.get('name'))))
    out = set()
    for evs in by_lane.values():
        evs.sort()
        open_ops = []  # (end, name)
        for s, neg_end, py, n in evs:
            open_ops = [o for o in open_ops if o[0] > s]
            if py:
                out.update(o[1] for o in open_ops if -neg_end <= o[0])
            else:
                open_ops.append((-neg_end, n))
    return out


def keyavg_problems(name, trace, j, keyavg_path):
    problems = []
    ours = {o['name']: o for o in j['operators']}
    theirs = {}
    for k in json.load(open(keyavg_path)):  # a kernel named like its launching op is a second row: keep the host one
        if k['name'] not in theirs or k['cpu_total_us'] > theirs[k['name']]['cpu_total_us']:
            theirs[k['name']] = k
    cpu_ops = {str(e.get('name')) for e in read_events(trace)
               if isinstance(e, dict) and e.get('ph') == 'X' and e.get('cat') == 'cpu_op'}
    for n in sorted(set(theirs) - set(ours)):
        if n in cpu_ops and not n.startswith(WRAPPER) and theirs[n]['count'] > 0:
            problems.append(f'torch lists operator {n!r}, analyze does not')
    for n in sorted(set(ours) - set(theirs)):
        problems.append(f'analyze lists {n!r}, torch does not')
    # torch 2.13's table counts Python functions run inside an operator as its children
    # (their time is not its self time), as analyze does; torch 2.12 and older leave
    # Python out of the table and count it as self: there, ours may only be less.
    old_table = not any('.py(' in k for k in theirs)
    holding = operators_holding_python(read_events(trace)) if old_table else set()
    for n in sorted(set(ours) & set(theirs)):
        o, t = ours[n], theirs[n]
        if o['calls'] != t['count']:
            problems.append(f'{n}: {o["calls"]} calls, torch {t["count"]}')
        for a, b in (('host_total_us', 'cpu_total_us'), ('host_self_us', 'self_cpu_us'),
                     ('device_total_us', 'device_total_us')):
            x, y = float(o[a]), float(t[b])
            if a == 'host_self_us' and n in holding:
                if x > y + 1:
                    problems.append(f'{n}: {a} {x}, more than torch\'s {y} with its Python counted as self')
                continue
            if abs(x - y) > 1 + 0.01 * max(abs(x), abs(y)) and (name, n, a) not in TORCH_OFF:
                problems.append(f'{n}: {a} {x}, torch {y}')
    return problems


def focus_totals(out, focus):
    """work and gpu summed over the samples go tool pprof -focus selects (None: no such column)."""
    g = subprocess.run(['go', 'tool', 'pprof', '-raw', '-focus=' + focus, out], capture_output=True, text=True)
    raw = RawText(g.stdout)
    return {c: (sum(raw.value(smp, c) for smp in raw.samples) if c in raw.types else None) for c in ('work', 'gpu')}


def module_problems(binary, trace, j):
    """The module view is convert's default stacks summed: an instance's host total (work)
    and device total (gpu) are what go tool pprof -focus on its frame selects, a class's
    what -focus on its instances' frames selects; an instance's own time is its total less
    its child instances' totals; the call spine (_call_impl, forward, wrappers) is no module."""
    problems = []
    tree = j['modules']
    names = collections.Counter(m['name'] for m in tree)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'p.pb.gz')
        subprocess.run([binary, 'convert', trace, out], capture_output=True)
        for m in [m for m in tree if names[m['name']] == 1][:4]:
            got = focus_totals(out, '^nn\\.Module: ' + re.escape(m['name']) + '$')
            for key, column in (('host_total_us', 'work'), ('device_total_us', 'gpu')):
                if got[column] is not None and got[column] != ns(m[key]):
                    problems.append(f'module {m["name"]!r}: {key} {m[key]}, pprof -focus gives {got[column]} ns')
        for c in j['module_classes'][:2]:
            got = focus_totals(out, '^nn\\.Module: ' + re.escape(c['name']) + '_[0-9]+$')
            for key, column in (('host_total_us', 'work'), ('device_total_us', 'gpu')):
                if got[column] is not None and got[column] != ns(c[key]):
                    problems.append(f'class {c["name"]!r}: {key} {c[key]}, pprof -focus gives {got[column]} ns')
    for i, m in enumerate(tree):
        if m['parent'] is not None and (m['parent'] >= i or tree[m['parent']]['depth'] != m['depth'] - 1):
            problems.append(f'module {m["name"]!r}: parent {m["parent"]} is not the row above it a level up')
        kids = [k for k in tree if k['parent'] == i]
        if any(k['name'] == m['name'] for k in kids):
            continue  # an instance inside itself: its totals count once
        for own, total in (('host_self_us', 'host_total_us'), ('device_self_us', 'device_total_us')):
            want = Decimal(m[total]) - sum(Decimal(k[total]) for k in kids)
            if Decimal(m[own]) != want:
                problems.append(f'module {m["name"]!r}: {own} {m[own]}, total less children {want}')
                break
    spine = [m['name'] for m in tree if not re.match(r'^[A-Za-z_][\w.]*$', m['name'])]
    if spine:
        problems.append(f'module rows that are no nn.Module instance: {spine[:3]}')
    return problems


def lane_problems(trace, j, binary):
    """Lanes as the trace text has them: a device stream's busy time is the union of its
    kernels, memcpys and memsets (no annotation idle), and equals the GPU table's busy on a
    one-stream device; a CPU thread's work is convert's work on that thread."""
    problems = []
    spans = collections.defaultdict(list)
    device_lanes = set()
    for e in read_events(trace):
        if not isinstance(e, dict) or e.get('ph') != 'X' or 'ts' not in e or e.get('dur') is None:
            continue
        cat = str(e.get('cat') or '').lower()
        lane = (as_text(e.get('pid')), as_text(e.get('tid')))
        if cat in DEVICE | {'gpu_user_annotation'}:
            device_lanes.add(lane)
        if cat in DEVICE and ns(e['dur']) > 0:
            spans[lane].append((ns(e['ts']), ns(e['ts']) + ns(e['dur'])))
    lanes = {(l['pid'], l['tid']): l for l in j['trace']['lanes']}
    for lane in device_lanes:
        got = lanes.get(lane)
        want = union(spans[lane])
        if got is None or got['kind'] != 'device' or ns(got['busy_us']) != want or got['work_us'] is not None:
            problems.append(f'device lane {lane}: {got and (got["kind"], got["busy_us"], got["work_us"])}, '
                            f'want busy {want} ns of device work and no work')
    streams = collections.Counter(l['kind'] for l in j['trace']['lanes'])
    if len(j['gpu']) == 1 and j['gpu'][0]['streams'] == 1:
        stream = [l for l in j['trace']['lanes'] if l['kind'] == 'device' and ns(l['busy_us'])]
        if len(stream) == 1 and stream[0]['busy_us'] != j['gpu'][0]['busy_us']:
            problems.append(f'stream busy {stream[0]["busy_us"]} != GPU busy {j["gpu"][0]["busy_us"]}')
    if streams['device'] == 0 and j['gpu']:
        problems.append('a GPU table without device lanes')
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'p.pb.gz')
        subprocess.run([binary, 'convert', trace, out], capture_output=True)
        raw = RawText(subprocess.run(['go', 'tool', 'pprof', '-raw', out], capture_output=True, text=True).stdout)
        work = collections.Counter()
        for smp in raw.samples:
            work[(smp['labels'].get('pid'), smp['labels'].get('tid'))] += raw.value(smp, 'work')
        for lane, l in lanes.items():
            if l['kind'] == 'cpu' and ns(l['work_us']) != work[lane]:
                problems.append(f'lane {lane}: work {l["work_us"]}, convert\'s work {work[lane]} ns')
    return problems


def union(spans):
    total, end = 0, None
    for s, t in sorted(spans):
        if end is None or s > end:
            total += t - s
            end = t
        elif t > end:
            total += t - end
            end = t
    return total


def covered_problems(trace, j):
    """Each category's covered time is the union of its events per lane, summed over lanes."""
    spans = collections.defaultdict(list)
    evs = [e for e in read_events(trace) if isinstance(e, dict)]
    py_end = python_ends(evs)
    open_b = collections.defaultdict(list)
    for k, e in enumerate(evs):
        cat = e.get('cat', '') if isinstance(e.get('cat', ''), str) else ''
        lane = (as_text(e.get('pid')), as_text(e.get('tid')))
        if e.get('ph') == 'B' and 'ts' in e:
            open_b[lane].append((ns(e['ts']), cat))
            continue
        if e.get('ph') == 'E' and 'ts' in e and open_b[lane]:
            start, cat = open_b[lane].pop()
            if ns(e['ts']) > start:
                spans[(cat,) + lane].append((start, ns(e['ts'])))
            continue
        if e.get('ph') != 'X' or 'ts' not in e or e.get('dur') is None or ns(e['dur']) <= 0:
            continue
        if cat.lower() == 'trace':
            continue
        start, end = ns(e['ts']), py_end.get(k, ns(e['ts']) + ns(e['dur']))
        if end is None or end <= start:
            continue
        spans[(cat,) + lane].append((start, end))
    covered = collections.Counter()
    for (cat, _, _), sp in spans.items():
        covered[cat] += union(sp)
    problems = []
    for c in j['categories']:
        if ns(c['covered_us']) != covered[c['category']]:
            problems.append(f'category {c["category"]!r}: covered {c["covered_us"]}, trace {covered[c["category"]]} ns')
    return problems


def complete_problems(j):
    """Without -top, JSON keeps every row of every list and says how many there are."""
    problems = [f'{key}: {len(j[key])} rows, counts says {n}' for key, n in j['counts'].items() if len(j[key]) != n]
    if j['steps']:
        avg = j['step_average']
        mean = sum(Decimal(s['total_us']) for s in j['steps']) / len(j['steps'])
        if avg['steps'] != len(j['steps']) or abs(Decimal(avg['total_us']) - mean) > Decimal('0.001'):
            problems.append(f'step_average {avg["total_us"]} over {avg["steps"]}, mean of the steps {mean}')
    return problems


def step_problems(trace, j):
    """Steps are host-side ProfilerStep events, each once, none of 0 ns, in order."""
    host = sorted((Decimal(str(e['ts'])), str(e['name'])) for e in read_events(trace)
                  if isinstance(e, dict) and e.get('ph') == 'X' and str(e.get('name', '')).startswith('ProfilerStep#')
                  and e.get('cat') in ('cpu_op', 'user_annotation'))
    names = [s['name'] for s in j['steps']]
    problems = []
    if len(set(names)) != len(names):
        problems.append(f'steps repeat: {names}')
    if names != [n for _, n in host][:len(names)]:
        problems.append(f'steps {names} are not the host ProfilerSteps {[n for _, n in host]}')
    if any(Decimal(s['total_us']) <= 0 for s in j['steps']):
        problems.append('a step of 0 ns')
    if j['trace']['profiler_steps'] != len(host):
        problems.append(f'profiler_steps {j["trace"]["profiler_steps"]}, trace has {len(host)} host steps')
    return problems


class Checks(Tally):
    def __init__(self, binary):
        super().__init__()
        self.binary = binary

    def run(self, *args):
        return subprocess.run([self.binary, 'analyze'] + list(args), capture_output=True, text=True)

    def check(self, trace):
        problems = []
        r = self.run('--format', 'json', trace)  # no -top: every row
        if r.returncode != 0:
            return self.report(trace, [f'exit {r.returncode}: {r.stderr.strip()}'])
        j = json.loads(r.stdout, parse_float=Decimal)
        problems += complete_problems(j)
        problems += covered_problems(trace, j)
        problems += lane_problems(trace, j, self.binary)
        for key in ('trace', 'categories', 'steps', 'operators', 'kernels', 'gpu', 'memory', 'recommendations'):
            if key not in j:
                problems.append(f'no {key}')
        for s in j['steps']:
            parts = sum(Decimal(s[k]) for k in STEP_PARTS)
            if parts != Decimal(s['total_us']) or any(Decimal(s[k]) < 0 for k in STEP_PARTS):
                problems.append(f'step {s["name"]}: parts {parts} != total {s["total_us"]}')
        for o in j['operators']:
            if Decimal(o['host_self_us']) > Decimal(o['host_total_us']):
                problems.append(f'operator {o["name"]}: host self > total')
            if Decimal(o['device_self_us']) > Decimal(o['device_total_us']):
                problems.append(f'operator {o["name"]}: device self > total')
        count, total, kernels, kernel_us = model(trace)
        got_calls = sum(k['calls'] for k in j['kernels'])
        got_us = sum(Decimal(k['total_us']) for k in j['kernels'])
        if (got_calls, got_us) != (kernels, kernel_us):
            problems.append(f'kernels: {got_calls} calls {got_us} us, trace has {kernels} and {kernel_us}')
        cats = {c['category']: c for c in j['categories']}
        for cat in set(count) | set(cats):
            c = cats.get(cat, {'events': 0, 'total_us': 0})
            if (c['events'], Decimal(c['total_us'])) != (count[cat], total[cat]):
                problems.append(f'category {cat!r}: {c["events"]} events {c["total_us"]} us, trace has '
                                f'{count[cat]} and {total[cat]}')
        self_sum = sum(Decimal(c['self_us']) for c in j['categories'])
        busy = sum(Decimal(l['busy_us']) for l in j['trace']['lanes'])
        if self_sum != busy:
            problems.append(f'category self time {self_sum} != busy time {busy}')

        texts = [self.run(*a, trace).stdout for a in (['-top', '50'], ['--top', '50'], ['--top=50'])]
        if not (texts[0] == texts[1] == texts[2]) or not texts[0]:
            problems.append('-top 50, --top 50 and --top=50 differ')
        wide = [line for line in texts[0].split('\n') if len(line) > 120]
        if wide:
            problems.append(f'{len(wide)} text lines over 120 columns: {wide[0][:60]}...')

        c = self.run('--format', 'csv', '--table', 'steps', trace)
        rows = list(csv.DictReader(io.StringIO(c.stdout)))
        if c.returncode != 0 or len(rows) != len(j['steps']) or any(
                Decimal(row['total_us']) != Decimal(s['total_us']) for row, s in zip(rows, j['steps'])):
            problems.append('CSV steps differ from JSON steps')
        name = re.sub(r'\.pt\.trace\.json(\.gz)?$', '', os.path.basename(trace))
        keyavg = re.sub(r'\.pt\.trace\.json(\.gz)?$', '.key_averages.json', trace)
        if os.path.exists(keyavg) and keyavg != trace:
            problems += step_problems(trace, j)
            problems += module_problems(self.binary, trace, j)
            if name == 'gpt2_hf':  # the layer that costs the GPU most leads its classes
                first = [c['name'] for c in j['module_classes'][:5]]
                if 'NewGELUActivation' not in first:
                    problems.append(f'NewGELUActivation is not among the first classes by device time: {first}')
            problems += keyavg_problems(name, trace, j, keyavg)
        self.report(os.path.relpath(trace), problems)


def big_trace_problems(binary, trace):
    """The 50-step benchmark trace (not in testdata/; checked where ../shared has it): JSON
    without -top has all 50 steps and their average, every operator torch's key_averages()
    lists, and the CSV tables have the same rows."""
    r = subprocess.run([binary, 'analyze', '--format', 'json', trace], capture_output=True, text=True)
    if r.returncode:
        return [f'exit {r.returncode}']
    j = json.loads(r.stdout, parse_float=Decimal)
    problems = complete_problems(j)
    if len(j['steps']) != 50:
        problems.append(f'{len(j["steps"])} steps, want 50')
    ours = {o['name'] for o in j['operators']}
    cpu_ops = {k['name'] for k in json.load(open(trace.replace('.pt.trace.json.gz', '.key_averages.json')))
               if k['name'].startswith('aten::')}
    if cpu_ops - ours:
        problems.append(f'operators torch lists and JSON lacks: {sorted(cpu_ops - ours)[:3]}')
    for table in ('steps', 'operators', 'kernels'):
        c = subprocess.run([binary, 'analyze', '--format', 'csv', '--table', table, trace], capture_output=True, text=True)
        if len(list(csv.DictReader(io.StringIO(c.stdout)))) != len(j[table]):
            problems.append(f'CSV {table}: not the JSON rows')
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    a = ap.parse_args()
    c = Checks(a.binary)
    big = os.path.join(a.testdata, '..', '..', 'shared', 'traces', 'torch211', 'gpt2_big.pt.trace.json.gz')
    if os.path.exists(big):
        c.report('gpt2_big: JSON and CSV complete', big_trace_problems(a.binary, big))
    else:
        print('skip gpt2_big: ../shared/traces is not beside this checkout')
    for sub in ('real', os.path.join('real', 'torch211'), 'convert'):
        d = os.path.join(a.testdata, sub)
        for f in sorted(os.listdir(d)):
            if '.json' in f and 'key_averages' not in f:
                try:
                    c.check(os.path.join(d, f))
                except Exception as e:  # a crash of a check is a failure too
                    c.report(f, [f'{type(e).__name__}: {e}'])
    sample = os.path.join(a.testdata, 'convert', 'exact_decimals.json')
    for args, status in ((['--format', 'xml'], 2), (['--table', 'steps'], 2), (['--format', 'csv', '--table', 'x'], 2),
                         (['-top', '-1'], 2)):
        r = c.run(*args, sample)
        ok = r.returncode == status and r.stderr.startswith('torch2pprof: ') and r.stdout == ''
        c.report(f'usage error {" ".join(args)} -> exit {status}', [] if ok else [f'exit {r.returncode}: {r.stderr}'])
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
