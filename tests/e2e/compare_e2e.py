#!/usr/bin/env python3
"""End-to-end tests of `torch2pprof compare`.

- A trace against itself: nothing changes, nothing is significant, exit 0 under rules.
- A trace against a copy made exactly 30% slower (every ts offset from the first and
  every dur scaled by 13/10 in Decimal arithmetic, written here): step time +30%,
  significant, exit 4 under --fail-on 'step_time>+5%'.
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
            if not j['steps']['significant']:
                problems.append('+30% is not significant')
            if [x['rule'] for x in j['regressions']] != ['step_time>+5%']:
                problems.append(f'regressions {j["regressions"]}')
            elif abs(Decimal(j['regressions'][0]['change']) - 30) > Decimal('0.001'):
                problems.append(f'rule change {j["regressions"][0]["change"]}, want 30')
        if 'regression: step_time>+5%: +30.0% (45.8ms -> 59.6ms, significant)' not in r.stderr:
            problems.append(f'stderr does not say which rule fired: {r.stderr!r}')
        c.report('30% slower: step time +30%, significant, exit 4', problems)

        # Within the noise: the same trace against a copy 0.1% slower does not fire; --strict-noise does.
        slight = os.path.join(tmp, 'slight.json')
        slower_copy(lm, slight, Decimal(1001) / Decimal(1000))
        quiet = run('--fail-on', 'step_time>+0.05%', lm, slight)
        loud = run('--fail-on', 'step_time>+0.05%', '--strict-noise', lm, slight)
        c.report('a change within the noise fires only with --strict-noise',
                 [] if (quiet.returncode, loud.returncode) == (0, 4) else [f'exits {quiet.returncode} {loud.returncode}'])

        # -o: the diff profile, read by go tool pprof: the totals are new minus base.
        diff = os.path.join(tmp, 'diff.pb.gz')
        r = run('-o', diff, lm, slow)
        g = subprocess.run(['go', 'tool', 'pprof', '-raw', diff], capture_output=True, text=True)
        problems = [] if g.returncode == 0 else [g.stderr[-200:]]
        raw = RawText(g.stdout)
        wall = [sum(raw.value(smp, 'wall') for smp in raw.samples if (smp['labels'].get('pprof::base') == 'true') == b)
                for b in (True, False)]
        busy = []
        for t in (lm, slow):
            one = os.path.join(tmp, 'one.pb.gz')
            subprocess.run([a.binary, 'convert', t, one], capture_output=True)
            own = RawText(subprocess.run(['go', 'tool', 'pprof', '-raw', one], capture_output=True, text=True).stdout)
            busy.append(sum(own.value(smp, 'wall') for smp in own.samples))
        if wall != [-busy[0], busy[1]]:
            problems.append(f'diff wall: base {wall[0]}, new {wall[1]}; want {-busy[0]} and {busy[1]}')
        c.report('-o writes the diff go tool pprof reads', problems)

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

    for args, status in ((['x.json'], 2), (['--fail-on', 'step_time~5%', lm, lm], 2),
                         (['--fail-on', 'memory_peak>+5ms', lm, lm], 2), (['--fail-on', 'bogus>1', lm, lm], 2),
                         (['--format', 'xml', lm, lm], 2), (['/nonexistent.json', lm], 1)):
        r = run(*args)
        ok = r.returncode == status and r.stderr.startswith('torch2pprof: ') and len(r.stderr.strip().split('\n')) == 1
        c.report(f'compare {" ".join(args)[:60]} -> exit {status}', [] if ok else [f'exit {r.returncode}: {r.stderr}'])
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
