#!/usr/bin/env python3
"""Cost against input size on inputs made to be expensive, at two sizes each.

Each case is generated here (in bench/data/, which git ignores) at a size and at four
times that size, and run under /usr/bin/time -v; the table shows wall time and peak RSS
for both and their ratios. Linear cost reads about 4x (plus a constant); quadratic, 16x.

  bench/hostile.py [--binary build/torch2pprof]

Cases (README: errors; the issue that asked for them measured the old costs):
  staircase   intervals [k, 2k+1): each starts inside the one before, k/2 open at once
  spaces      white space between two events, gzipped (the input is 1000x its file)
  lanes       one interval on each of many distinct threads
  deep        chains of 2,000 nested intervals with distinct names, written as folded stacks
  steps       compare of a trace with many ProfilerSteps against itself
  names       analyze --format html of many distinct operator names
and the shapes of tests/e2e/shapes.py (deep, threads, side_sync, nested_steps, long_name,
steps_html, shared_file, devices), which tests/e2e/linear_e2e.py checks by CPU time and
peak RSS: here they are timed.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'e2e'))
import shapes  # noqa: E402


def timed(args):
    r = subprocess.run(['/usr/bin/time', '-v'] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f'{" ".join(args)}: exit {r.returncode}: {r.stderr[-400:]}')
    wall = re.search(r'Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)', r.stderr)
    h, m, s = wall.groups()
    seconds = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', r.stderr).group(1))
    return seconds, rss / 1024


def write_events(path, events):
    with open(path, 'w') as f:
        json.dump(events, f)


def make(case, n, path):
    if case == 'staircase':
        write_events(path, [{'ph': 'X', 'name': 's%d' % (k % 100), 'pid': 1, 'tid': 1, 'ts': k, 'dur': k + 1}
                            for k in range(n)])
    elif case == 'spaces':
        ev = b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": %d, "dur": 1}'
        with gzip.open(path, 'wb', compresslevel=1) as f:
            f.write(b'{"traceEvents": [' + ev % 0 + b',')
            chunk = b' ' * (1 << 20)
            for _ in range(n):
                f.write(chunk)
            f.write(ev % 2 + b']}')
    elif case == 'lanes':
        write_events(path, [{'ph': 'X', 'name': 'a', 'pid': 1, 'tid': k, 'ts': k, 'dur': 1} for k in range(n)])
    elif case == 'deep':
        events = []
        for c in range(n):
            for d in range(2000):
                events.append({'ph': 'X', 'name': 'c%d_%d' % (c, d), 'pid': 1, 'tid': 1, 'ts': c * 10000 + d,
                               'dur': 4000 - 2 * d})
        write_events(path, events)
    elif case == 'steps':
        events = []
        for k in range(n):
            events.append({'ph': 'X', 'cat': 'user_annotation', 'name': 'ProfilerStep#%d' % k, 'pid': 1, 'tid': 1,
                           'ts': 10 * k, 'dur': 9})
            events.append({'ph': 'X', 'cat': 'cpu_op', 'name': 'aten::op%d' % (k % 50), 'pid': 1, 'tid': 1,
                           'ts': 10 * k + 1, 'dur': 5})
        write_events(path, events)
    elif case in SHAPES:
        with open(path, 'wb') as f:
            f.write(getattr(shapes, case)(n))
    elif case == 'names':
        write_events(path, [{'ph': 'X', 'cat': 'cpu_op', 'name': 'op_%d' % k, 'pid': 1, 'tid': 1, 'ts': 2 * k,
                             'dur': 1} for k in range(n)])


CASES = {  # case: (the smaller size, its unit, the command)
    'staircase': (50000, 'intervals', lambda b, p, d: [b, 'convert', p, os.path.join(d, 'o.pb.gz')]),
    'spaces': (256, 'MiB of spaces', lambda b, p, d: [b, 'convert', p, os.path.join(d, 'o.pb.gz')]),
    'lanes': (100000, 'lanes', lambda b, p, d: [b, 'convert', p, os.path.join(d, 'o.pb.gz')]),
    'deep': (5, 'chains', lambda b, p, d: [b, 'convert', p, os.path.join(d, 'o.folded')]),
    'steps': (10000, 'steps', lambda b, p, d: [b, 'compare', p, p]),
    'names': (100000, 'names', lambda b, p, d: [b, 'analyze', '--format', 'html', p]),
}
SHAPES = {  # shapes.py: (the smaller size, its unit)
    'deep': (25000, 'nested calls'), 'threads': (4000, 'threads and steps'), 'side_sync': (10000, 'steps'),
    'nested_steps': (4000, 'steps'), 'long_name': (500, 'steps'), 'steps_html': (20000, 'steps'),
    'shared_file': (500, 'frames'), 'devices': (25000, 'devices'),
}
for _case, (_n, _unit) in SHAPES.items():
    CASES[_case] = (_n, _unit, lambda b, p, d: [b, 'analyze', '--format', 'html', p])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', default='build/torch2pprof')
    ap.add_argument('--data', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data'))
    a = ap.parse_args()
    os.makedirs(a.data, exist_ok=True)
    print('| case | size | wall | peak RSS | 4x size: wall | peak RSS | wall ratio | RSS ratio |')
    print('|---|---|---|---|---|---|---|---|')
    for case, (n, unit, command) in CASES.items():
        row = []
        for size in (n, 4 * n):
            ext = '.pickle' if case in ('shared_file', 'devices') else '.json' + ('.gz' if case == 'spaces' else '')
            path = os.path.join(a.data, f'hostile_{case}_{size}{ext}')
            if not os.path.exists(path):
                make(case, size, path)
            row.append(timed(command(a.binary, path, a.data)))
        (t1, m1), (t4, m4) = row
        print(f'| {case} | {n:,} {unit} | {t1:.2f} s | {m1:.0f} MiB | {t4:.2f} s | {m4:.0f} MiB | '
              f'{t4 / max(t1, 0.01):.1f}x | {m4 / max(m1, 1):.1f}x |')
        sys.stdout.flush()


if __name__ == '__main__':
    main()
