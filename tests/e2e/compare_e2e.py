#!/usr/bin/env python3
"""End-to-end tests of `torch2pprof compare`.

- A trace against itself: nothing changes, nothing is significant, exit 0 under rules.
- A trace against a copy made exactly 30% slower (every ts offset from the first and
  every dur scaled by 13/10 in Decimal arithmetic, written here): step time +30%, exit 4
  under --fail-on 'step_time>+5%', the verdict on the report's first lines, and nothing
  called significant over its 3 steps (the noise is judged from 10 steps a run).
- HTA's trace_compare base/test pair: the operators and kernels present in one run only,
  computed here from the trace text, are exactly what compare lists as added and removed.
- Markdown renders with Python's markdown package: a table per section, every name
  whole. -o writes a diff profile go tool pprof reads, whose totals are the
  new run's minus the base's.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_e2e import RawText  # noqa: E402
from e2e_common import Tally, read_events  # noqa: E402


def slower_copy(path, out, factor=Decimal(13) / Decimal(10)):
    """Every event's ts moved away from the first ts and every dur scaled by factor."""
    raw = open(path, 'rb').read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    events = doc['traceEvents'] if isinstance(doc, dict) else doc
    t0 = min(Decimal(str(e['ts'])) for e in events if isinstance(e, dict) and 'ts' in e)
    for e in events:
        if isinstance(e, dict):
            if 'ts' in e:
                e['ts'] = t0 + (Decimal(str(e['ts'])) - t0) * factor
            if 'dur' in e and e['dur'] is not None:
                e['dur'] = Decimal(str(e['dur'])) * factor
    with open(out, 'w') as f:
        f.write(dumps_exact(doc))


def tile(path, out, copies):
    """The trace's events `copies` times back to back, ids (correlation, External id, Python
    ids, flow ids) offset per copy so that every link stays within its copy."""
    raw = open(path, 'rb').read()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b'\x1f\x8b' else raw, parse_float=Decimal)
    events = doc['traceEvents']
    timed = [e for e in events if isinstance(e, dict) and 'ts' in e and e.get('ph') != 'M']
    start = min(Decimal(str(e['ts'])) for e in timed)
    end = max(Decimal(str(e['ts'])) + Decimal(str(e.get('dur') or 0)) for e in timed)
    keys = ('correlation', 'External id', 'external id', 'Python id', 'Python parent id')
    out_events = [e for e in events if not (isinstance(e, dict) and e in timed)]
    for k in range(copies):
        shift, offset = (end - start + 1000) * k, 10 ** 9 * k
        for e in timed:
            c = json.loads(dumps_exact(e), parse_float=Decimal)
            c['ts'] = Decimal(str(c['ts'])) + shift
            for key in keys:
                if isinstance((c.get('args') or {}).get(key), int):
                    c['args'][key] += offset
            if isinstance(c.get('id'), int):
                c['id'] += offset
            out_events.append(c)
    doc['traceEvents'] = out_events
    with open(out, 'w') as f:
        f.write(dumps_exact(doc))


def kernel_moves(binary, base, new, tmp, tolerance):
    """The kernels of compare -o's per-step diff whose device time moved by more than
    `tolerance` of their base time per step (those of at least 1% of the GPU time)."""
    diff = os.path.join(tmp, 'kernels.pb.gz')
    r = subprocess.run([binary, 'compare', '-o', diff, base, new], capture_output=True, text=True)
    if r.returncode != 0:
        return [f'exit {r.returncode}: {r.stderr[-200:]}']
    raw = RawText(subprocess.run(['go', 'tool', 'pprof', '-raw', diff], capture_output=True, text=True).stdout)
    by_kernel = {}
    for smp in raw.samples:
        g = raw.value(smp, 'gpu')
        if g:
            side = 0 if smp['labels'].get('pprof::base') == 'true' else 1
            name = raw.locations[smp['stack'][0]][4]
            by_kernel.setdefault(name, [0, 0])[side] += g
    gpu = sum(-b for b, _ in by_kernel.values())
    moved = [(name, -b, n) for name, (b, n) in by_kernel.items()
             if -b >= gpu / 100 and abs(n + b) > tolerance * -b]
    return [f'{len(moved)} kernels moved, e.g. {moved[0][0][:60]!r}: {moved[0][1]} -> {moved[0][2]} ns a step']\
        if moved else ([] if gpu > 0 else ['no device time in the diff'])


def slower_kernels(path, out, name_part, factor):
    """The kernels whose name holds name_part last `factor` times as long (nothing moves)."""
    raw = open(path, 'rb').read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    for e in doc['traceEvents']:
        if isinstance(e, dict) and e.get('cat') == 'kernel' and name_part in str(e.get('name')) and 'dur' in e:
            e['dur'] = Decimal(str(e['dur'])) * factor
    with open(out, 'w') as f:
        f.write(dumps_exact(doc))


def dumps_exact(v):
    """JSON with every Decimal written exactly (json.dumps would go through a float)."""
    if isinstance(v, Decimal):
        return format(v, 'f')
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, (int, float, str)):
        return json.dumps(v)
    if isinstance(v, list):
        return '[' + ','.join(dumps_exact(x) for x in v) + ']'
    return '{' + ','.join(json.dumps(k) + ':' + dumps_exact(x) for k, x in v.items()) + '}'


def only_in_one(base, new):
    """Operator (cpu_op) and kernel names present in one run only, from the trace text."""
    def names(path, cats):
        return {str(e['name']) for e in read_events(path)
                if isinstance(e, dict) and e.get('ph') == 'X' and str(e.get('cat', '')).lower() in cats}
    ops_b, ops_n = names(base, {'cpu_op', 'operator'}), names(new, {'cpu_op', 'operator'})
    k_b, k_n = names(base, {'kernel'}), names(new, {'kernel'})
    return (ops_n - ops_b, ops_b - ops_n), (k_n - k_b, k_b - k_n)


def render_markdown(text):
    code = 'import sys, markdown; print(markdown.markdown(sys.stdin.read(), extensions=["tables"]))'
    for py in (sys.executable, '/usr/bin/python3'):
        r = subprocess.run([py, '-c', code], input=text, capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout
    raise AssertionError('no Python with the markdown package (apt-get install python3-markdown)')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    a = ap.parse_args()
    c = Tally()
    run = lambda *args: subprocess.run([a.binary, 'compare'] + list(args), capture_output=True, text=True)
    lm = os.path.join(a.testdata, 'real', 'torch211', 'lm_train.pt.trace.json.gz')

    r = run('--format', 'json', '--fail-on', 'step_time>+1%', '--fail-on', 'memory_peak>+0B', lm, lm)
    problems = [] if r.returncode == 0 else [f'exit {r.returncode}: {r.stderr[-200:]}']
    if not problems:
        j = json.loads(r.stdout, parse_float=Decimal)
        if j['steps']['significant'] or Decimal(j['steps']['median_change_us']) != 0:
            problems.append('a trace against itself changed')
        if any(p['significant'] for p in j['steps']['parts']) or j['regressions']:
            problems.append('something significant or fired')
        if any(o['status'] != 'changed' or Decimal(o['host_total_change_us']) != 0 for o in j['operators']):
            problems.append('an operator changed')
    c.report('a trace against itself: nothing changes, exit 0', problems)

    with tempfile.TemporaryDirectory() as tmp:
        slow = os.path.join(tmp, 'slow.json')
        slower_copy(lm, slow)
        r = run('--format', 'json', '--fail-on', 'step_time>+5%', lm, slow)
        problems = [] if r.returncode == 4 else [f'exit {r.returncode}, want 4: {r.stderr[-300:]}']
        j = json.loads(r.stdout, parse_float=Decimal) if r.stdout else {}
        if j:
            base, new = Decimal(j['steps']['base']['median_us']), Decimal(j['steps']['new']['median_us'])
            # Scaled by 13/10 and rounded to the ns: within 1 ns of exactly +30%.
            if abs(new - base * Decimal('1.3')) > Decimal('0.001'):
                problems.append(f'median {base} -> {new}, not +30%')
            # Three steps a run are too few to judge the noise by: never "significant".
            if j['steps']['significant'] or any(p['significant'] for p in j['steps']['parts']):
                problems.append('called significant over 3 steps')
            if [x['rule'] for x in j['regressions']] != ['step_time>+5%']:
                problems.append(f'regressions {j["regressions"]}')
            elif abs(Decimal(j['regressions'][0]['change']) - 30) > Decimal('0.001'):
                problems.append(f'rule change {j["regressions"][0]["change"]}, want 30')
        if 'regression: step_time>+5%: +30.0% (45.8ms -> 59.6ms; the noise not judged: 3 and 3 steps' not in r.stderr:
            problems.append(f'stderr does not say which rule fired: {r.stderr!r}')
        for fmt in ('text', 'markdown'):  # the verdict first, never "significant" over 3 steps
            out = run('--format', fmt, '--fail-on', 'step_time>+5%', lm, slow).stdout
            head = '\n'.join(out.splitlines()[:6])
            if 'fired (exit 4)' not in head or 'FIRED' not in head or 'significant' in out:
                problems.append(f'{fmt}: {head!r}')
        c.report('30% slower: step time +30%, exit 4, the verdict first, nothing called significant', problems)

        # The threshold decides: uniform slowdowns past 5% fire with the usual 3 steps, the
        # unslowed copy does not; --noise-aware holds them back, each with a line on stderr.
        for pct in (7, 10, 15, 20):
            slowed = os.path.join(tmp, f'slow{pct}.json')
            slower_copy(lm, slowed, Decimal(100 + pct) / Decimal(100))
            fired = run('--fail-on', 'step_time>+5%', lm, slowed)
            aware = run('--noise-aware', '--fail-on', 'step_time>+5%', lm, slowed)
            problems = [] if fired.returncode == 4 else [f'exit {fired.returncode}, want 4']
            if f'regression: step_time>+5%: +{pct}.0%' not in fired.stderr:
                problems.append(f'stderr {fired.stderr[-200:]!r}')
            held = [ln for ln in aware.stderr.splitlines() if ln.startswith('torch2pprof: held: step_time>+5%')]
            if aware.returncode == 0 and len(held) != 1:
                problems.append(f'--noise-aware held it back without a line: {aware.stderr!r}')
            if aware.returncode == 4 and held:
                problems.append('fired and held')
            c.report(f'+{pct}% slower over 3 steps: step_time>+5% fires; --noise-aware says why if it holds', problems)
        same = os.path.join(tmp, 'same.json')
        slower_copy(lm, same, Decimal(1))
        r = run('--fail-on', 'step_time>+5%', lm, same)
        c.report('the unslowed copy: exit 0, nothing on stderr',
                 [] if r.returncode == 0 and not r.stderr else [f'exit {r.returncode}: {r.stderr!r}'])
        # A trace without steps is one measurement and can fire.
        alexnet = os.path.join(a.testdata, 'real', 'hta__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz')
        slow_alex = os.path.join(tmp, 'alex50.json')
        slower_copy(alexnet, slow_alex, Decimal(3) / Decimal(2))
        r = run('--fail-on', 'step_time>+5%', alexnet, slow_alex)
        aware = run('--noise-aware', '--fail-on', 'step_time>+5%', alexnet, slow_alex)
        ok = r.returncode == 4 and aware.returncode == 0 and 'held: step_time>+5%' in aware.stderr and \
            'too few to judge the noise by' in aware.stderr
        c.report('+50% on a trace without steps fires; --noise-aware says it cannot judge one step',
                 [] if ok else [f'exits {r.returncode} {aware.returncode}: {aware.stderr!r}'])
        # A threshold without its unit is a usage error that suggests the percentage.
        r = run('--fail-on', 'step_time>+5', lm, lm)
        c.report('step_time>+5 (no unit) exits 2 and suggests +5%',
                 [] if r.returncode == 2 and 'write +5% for a share of the base value' in r.stderr else [r.stderr])
        # The GEMM kernels 1.5x slower, nothing else: the README's op rule fires on device time.
        gemm = os.path.join(tmp, 'gemm.json')
        slower_kernels(lm, gemm, 'nvjet', Decimal(3) / Decimal(2))
        r = run('--fail-on', 'op:aten::*mm>+10%', '--fail-on', 'kernel:nvjet*>+10%', lm, gemm)
        c.report("GEMM kernels 1.5x slower: op:aten::*mm>+10% fires, on the device side",
                 [] if r.returncode == 4 and 'op:aten::*mm>+10%' in r.stderr and 'in device time' in r.stderr
                 else [f'exit {r.returncode}: {r.stderr!r}'])

        # -o: the diff profile, per step, read by go tool pprof: each side is its run's totals
        # divided by its steps (rounded per sample), the base's negated.
        diff = os.path.join(tmp, 'diff.pb.gz')
        r = run('-o', diff, lm, slow)
        g = subprocess.run(['go', 'tool', 'pprof', '-raw', diff], capture_output=True, text=True)
        problems = [] if g.returncode == 0 else [g.stderr[-200:]]
        top = subprocess.run(['go', 'tool', 'pprof', '-top', diff], capture_output=True, text=True)
        if 'Main binary filename not available' in top.stdout + top.stderr or 'File: slow.json vs' not in top.stdout:
            problems.append(f'pprof does not name the diff: {top.stdout[:120]!r}')
        raw = RawText(g.stdout)
        wall = [sum(raw.value(smp, 'wall') for smp in raw.samples if (smp['labels'].get('pprof::base') == 'true') == b)
                for b in (True, False)]
        totals, counts = [], []
        for t in (lm, slow):
            one = os.path.join(tmp, 'one.pb.gz')
            subprocess.run([a.binary, 'convert', t, one], capture_output=True)
            own = RawText(subprocess.run(['go', 'tool', 'pprof', '-raw', one], capture_output=True, text=True).stdout)
            totals.append(sum(own.value(smp, 'wall') for smp in own.samples))
            counts.append(len(own.samples))
        want = [-totals[0] / 3, totals[1] / 3]  # both runs have 3 steps
        if any(abs(w - x) > n for w, x, n in zip(wall, want, counts)):
            problems.append(f'diff wall per step: base {wall[0]}, new {wall[1]}; want {want[0]:.0f} and {want[1]:.0f}')
        c.report('-o writes the per-step diff go tool pprof reads and names', problems)

        # Per step, runs of different lengths compare: lm_train against four copies of itself
        # back to back (12 steps) changes no kernel.
        tiled = os.path.join(tmp, 'tiled.json')
        tile(lm, tiled, 4)
        c.report('the per-step diff of 3 steps against 12 of the same run: no kernel moves',
                 kernel_moves(a.binary, lm, tiled, tmp, 0.02))
    shared = os.path.join(a.testdata, '..', '..', 'shared', 'traces', 'torch211')
    if os.path.exists(os.path.join(shared, 'gpt2_big.pt.trace.json.gz')):
        with tempfile.TemporaryDirectory() as tmp:
            c.report('the per-step diff of gpt2_hf (3 steps) against gpt2_big (50): kernels within a few percent',
                     kernel_moves(a.binary, os.path.join(shared, 'gpt2_hf.pt.trace.json.gz'),
                                  os.path.join(shared, 'gpt2_big.pt.trace.json.gz'), tmp, 0.05))
    else:
        print('skip gpt2_hf against gpt2_big: ../shared/traces is not beside this checkout')

    base = os.path.join(a.testdata, 'real', 'hta__trace_compare__base__base.json.gz')
    test = os.path.join(a.testdata, 'real', 'hta__trace_compare__test__test.json.gz')
    r = run('--format', 'json', '-top', '0', base, test)
    j = json.loads(r.stdout) if r.returncode == 0 else {'operators': [], 'kernels': []}
    (ops_added, ops_removed), (k_added, k_removed) = only_in_one(base, test)
    got = lambda rows, status: {x['name'] for x in rows if x['status'] == status}
    problems = []
    for what, rows, added, removed in (('operators', j['operators'], ops_added, ops_removed),
                                       ('kernels', j['kernels'], k_added, k_removed)):
        if got(rows, 'added') != added or got(rows, 'removed') != removed:
            problems.append(f'{what}: added {sorted(got(rows, "added"))} removed {sorted(got(rows, "removed"))}, '
                            f'want {sorted(added)} and {sorted(removed)}')
    if not (ops_added or ops_removed):
        problems.append('the pair has no operator added or removed: the test would prove nothing')
    c.report('HTA trace_compare pair: added and removed operators and kernels', problems)

    r = run('--format', 'markdown', '-top', '0', base, test)
    problems = [] if r.returncode == 0 else [f'exit {r.returncode}']
    # Names are never cut: every operator and kernel appears whole in its table.
    for row in j['operators'] + j['kernels']:
        if row['name'].replace('|', '\\|') not in r.stdout:
            problems.append(f'markdown cuts {row["name"][:60]!r}')
            break
    html = render_markdown(r.stdout)
    sections = re.findall(r'<h3>(.*?)</h3>(.*?)(?=<h3>|$)', html, re.S)
    if len(sections) < 4:
        problems.append(f'{len(sections)} sections')
    for title, body in sections:
        if '<table>' not in body:
            problems.append(f'section {title!r} has no table')
    c.report('markdown renders a table per section, names whole', problems)

    # Operators whose names differ only after character 60 stay apart in text and markdown.
    prefix = 'autograd::engine::evaluate_function: ' + 'VeryLongBackwardFunctionName' * 3
    names = [prefix + 'Alpha0', prefix + 'Beta0']
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, scale in (('base', 1), ('new', 2)):
            events = [{'ph': 'X', 'cat': 'cpu_op', 'name': n, 'pid': 1, 'tid': 1, 'ts': 10 + 100 * i,
                       'dur': (i + 1) * 10 * scale} for i, n in enumerate(names)]
            paths.append(os.path.join(tmp, k + '.json'))
            with open(paths[-1], 'w') as f:
                json.dump({'traceEvents': events}, f)
        problems = []
        text = run(*paths).stdout
        ops = text.split('Operators')[1] if 'Operators' in text else ''
        for suffix in ('Alpha0', 'Beta0'):
            if suffix not in ops:
                problems.append(f'text operators lose {suffix!r}: {ops[:300]!r}')
        md = run('--format', 'markdown', *paths).stdout
        problems += [f'markdown cuts {n[-20:]!r}' for n in names if n not in md]
        problems += [f'markdown cuts the file name {p!r}' for p in paths if os.path.basename(p) not in md]
    c.report('names that differ after character 60 stay apart in text and markdown', problems)

    for args, status in ((['x.json'], 2), (['--fail-on', 'step_time~5%', lm, lm], 2),
                         (['--fail-on', 'memory_peak>+5ms', lm, lm], 2), (['--fail-on', 'bogus>1', lm, lm], 2),
                         (['--format', 'xml', lm, lm], 2), (['/nonexistent.json', lm], 1)):
        r = run(*args)
        ok = r.returncode == status and r.stderr.startswith('torch2pprof: ') and len(r.stderr.strip().split('\n')) == 1
        c.report(f'compare {" ".join(args)[:60]} -> exit {status}', [] if ok else [f'exit {r.returncode}: {r.stderr}'])
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
