#!/usr/bin/env python3
"""Memory snapshots of every shape: cost linear in the input, memory bounded, or refused
with the cap named; every valid snapshot read; sites that are code.

- Hostile shapes, each at two sizes, measured by what the machine's load does not change
  (CPU time and peak RSS from /usr/bin/time, never wall-clock time) with generous bounds: many devices with a segment each (linear), a "billion laughs" of shared segments
  and blocks lists (refused at the expansion cap, whatever its size), many empty rings
  (read up to torch's device count, refused past it), a gzip holding a gigabyte string or
  a stream that inflates a thousand times (refused), MARKs without end (refused),
  record_function marks against a ring whose time goes back (linear), many out-of-memory
  entries (linear).
- Rings that share entries (built with Python's pickle from a real snapshot) convert to
  the same profile as the same rings unshared.
- On every real snapshot in testdata/ and ../shared/snapshots: no site at a peak or an
  OOM is an interpreter or dispatcher frame; the training step's gradients are the
  autograd engine's `[backward] AccumulateGrad`.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import copy
import glob
import gzip
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402


LOOSE = 1  # the bounds' factor: a sanitizer's shadow memory and checks cost several times


def measured(args):
    """(result, CPU seconds, peak RSS in MB) of a command under /usr/bin/time: CPU time,
    which a loaded machine does not inflate as it does wall-clock time, and the peak of a
    child that starts small (one forked from this Python process would count its pages)."""
    r = subprocess.run(['/usr/bin/time', '-q', '-f', 'measured=%U %S %M'] + args, capture_output=True, text=True)
    err, _, last = r.stderr.rstrip('\n').rpartition('\n')
    if not last.startswith('measured='):
        err, last = r.stderr, 'measured=0 0 0'
    user, system, kb = last[len('measured='):].split()
    r.stderr = err
    return r, float(user) + float(system), int(kb) / 1024


def write(path, data):
    with open(path, 'wb') as f:
        f.write(data)
    return path


def many_devices(n):
    return {'segments': [{'device': d, 'address': d << 20, 'total_size': 1024, 'stream': 0,
                          'segment_type': 'small', 'blocks': [{'address': d << 20, 'size': 1024,
                                                               'requested_size': 1000,
                                                               'state': 'active_allocated', 'frames': []}]}
                         for d in range(n)],
            'device_traces': [[{'action': 'alloc', 'addr': 7, 'size': 8, 'stream': 0, 'time_us': 1, 'frames': []}]
                              for _ in range(min(n, 1000))]}


def laughs(k):
    b = {'address': 0, 'size': 8, 'requested_size': 8, 'state': 'active_allocated', 'frames': []}
    seg = {'device': 0, 'address': 0, 'total_size': 8 * k, 'stream': 0, 'blocks': [b] * k}
    return {'segments': [seg] * k, 'device_traces': []}


def annotations_backwards(n):
    frames = [{'name': 'step', 'filename': 'train.py', 'line': 3}]
    ring, marks = [], []
    for i in range(n):
        t = 2 * n - i if i % 2 else i  # the time goes back every other entry
        ring.append({'action': 'alloc' if i % 2 == 0 else 'free_completed', 'addr': (i // 2) * 64, 'size': 64,
                     'stream': 0, 'time_us': t, 'frames': frames})
        marks.append({'device': 0, 'stage': 'START' if i % 2 == 0 else 'END', 'name': f'r{i // 2}',
                      'time_us': i})
    return {'segments': [], 'device_traces': [ring], 'external_annotations': marks}


def many_ooms(n):
    ring = [{'action': 'alloc', 'addr': i * 64, 'size': 64, 'stream': 0, 'time_us': i, 'frames': []}
            for i in range(n)]
    ring += [{'action': 'oom', 'addr': 0, 'size': 1 << 30, 'stream': 0, 'time_us': n + i, 'device_free': 5,
              'frames': []} for i in range(n)]
    return {'segments': [], 'device_traces': [ring]}


def grows(tally, binary, tmp, name, make, sizes, ok_exit=0, message=None, rss_mb=600, seconds=20, linear=True):
    """Both sizes converted and analysed within the bounds (CPU seconds, MB); where linear,
    twice the input costs at most three times the CPU time (quadratic reads 4x) plus 0.5 s."""
    problems, times = [], []
    for n in sizes:
        path = write(os.path.join(tmp, f'{name}_{n}.pickle'), make(n))
        for cmd in (['convert', path, os.path.join(tmp, 'o.pb.gz')], ['analyze', '--format', 'json', path]):
            r, t, rss = measured([binary] + cmd)
            if r.returncode != ok_exit:
                problems.append(f'{cmd[0]} {n}: exit {r.returncode}: {r.stderr.strip()[:200]}')
            elif message and (message not in r.stderr or len(r.stderr.strip().split('\n')) != 1):
                problems.append(f'{cmd[0]} {n}: stderr {r.stderr.strip()[:200]!r} lacks {message!r}')
            if t > seconds * LOOSE or rss > rss_mb * LOOSE:
                problems.append(f'{cmd[0]} {n}: {t:.2f} s CPU, {rss:.0f} MB (bounds {seconds} s, {rss_mb} MB)')
            if cmd[0] == 'analyze':
                times.append(t)
        os.remove(path)
    if linear and len(times) == 2 and times[1] > 3 * times[0] + 0.5 * LOOSE:
        problems.append(f'{sizes[0]} -> {sizes[1]}: {times[0]:.2f} -> {times[1]:.2f} s CPU, not linear')
    tally.report(f'{name} at {sizes}: ' + ('refused, bounded' if ok_exit else 'linear') +
                 f' (analyze {", ".join(f"{t:.2f}" for t in times)} s CPU)', problems)


def refused(tally, binary, tmp, name, path, message, seconds=10, rss_mb=300):
    r, t, rss = measured([binary, 'convert', path, os.path.join(tmp, 'r.pb.gz')])
    problems = []
    if r.returncode != 1 or message not in r.stderr or len(r.stderr.strip().split('\n')) != 1:
        problems.append(f'exit {r.returncode}: {r.stderr.strip()[:300]!r}')
    if t > seconds * LOOSE or rss > rss_mb * LOOSE:
        problems.append(f'{t:.2f} s, {rss:.0f} MB')
    if os.path.exists(os.path.join(tmp, 'r.pb.gz')):
        problems.append('an output was written')
    tally.report(f'{name}: refused in {t:.2f} s, {rss:.0f} MB', problems)


def hostile(tally, binary, tmp):
    grows(tally, binary, tmp, 'devices with a segment each', lambda n: pickle.dumps(many_devices(n), protocol=4),
          (20000, 40000))
    grows(tally, binary, tmp, 'billion laughs', lambda k: pickle.dumps(laughs(k), protocol=4), (3000, 30000),
          ok_exit=1, message='--max-snapshot-items', rss_mb=400, seconds=10, linear=False)
    grows(tally, binary, tmp, 'empty rings within torch\'s device count',
          lambda n: pickle.dumps({'segments': [], 'device_traces': [[] for _ in range(n)]}, protocol=4),
          (30000, 60000), rss_mb=200)
    refused(tally, binary, tmp, 'two million empty rings',
            write(os.path.join(tmp, 'rings.pickle'),
                  pickle.dumps({'segments': [], 'device_traces': [[] for _ in range(2_000_000)]}, protocol=4)),
            'at most 65536 devices')
    grows(tally, binary, tmp, 'record_function marks against a ring whose time goes back',
          lambda n: pickle.dumps(annotations_backwards(n), protocol=4), (20000, 40000))
    grows(tally, binary, tmp, 'out-of-memory entries', lambda n: pickle.dumps(many_ooms(n), protocol=4),
          (4000, 8000))
    # A gigabyte string in a small gzip: refused at its length.
    head = pickle.dumps({'segments': [], 'device_traces': []}, protocol=4)[:2]
    path = os.path.join(tmp, 'string.pickle.gz')
    with gzip.open(path, 'wb', compresslevel=1) as f:
        f.write(head + b'\x8d' + (1 << 30).to_bytes(8, 'little') + b'a' * (1 << 20))
    refused(tally, binary, tmp, 'a gzip holding a 1 GiB string', path, 'a string of 1073741824 bytes')
    # A stream that inflates a thousand times (NONE and POP, forever): refused at the cap.
    path = os.path.join(tmp, 'inflates.pickle.gz')
    with gzip.open(path, 'wb', compresslevel=9) as f:
        f.write(head)
        block = b'N0' * (1 << 19)
        for _ in range(300):
            f.write(block)
    refused(tally, binary, tmp, f'a gzip of {os.path.getsize(path) // 1024} KB inflating 300 MB', path,
            'inflates more than 256 times')
    refused(tally, binary, tmp, '10 MB of MARKs', write(os.path.join(tmp, 'marks.pickle'), head + b'(' * (10 << 20)),
            'MARKs open at once')


def shared_rings(tally, binary, tmp, source):
    with (gzip.open(source) if source.endswith('.gz') else open(source, 'rb')) as f:
        s = pickle.load(f)
    ring = s['device_traces'][0]
    outs = []
    for name, traces in (('shared', [ring, list(ring)]), ('unshared', [ring, copy.deepcopy(ring)])):
        t = dict(s)
        t['device_traces'] = traces
        path = write(os.path.join(tmp, f'{name}.pickle'), pickle.dumps(t, protocol=4))
        out = os.path.join(tmp, f'{name}.folded')
        r = subprocess.run([binary, 'convert', '--quiet', path, out], capture_output=True, text=True)
        outs.append(open(out).read() if r.returncode == 0 else f'exit {r.returncode}: {r.stderr}')
    tally.report(f'rings sharing entries ({os.path.basename(source)} twice): the profile of the unshared rings',
                 [] if outs[0] == outs[1] and outs[0].count('\n') > 10 else [outs[0][:200], outs[1][:200]])


INTERPRETER = re.compile(r'(^|/)(Objects|Python|Include|Modules|Parser)/|\.c:\d+|\.h:\d+|^_?Py[A-Z_]|'
                         r'^c10::impl::|^c10::Dispatcher|wrap_kernel_functor|Register[A-Za-z_]*\.cpp|'
                         r'CachingAllocator|^torch::unwind|CapturedTraceback')


def real_sites(tally, binary, paths):
    for path in paths:
        r = subprocess.run([binary, 'analyze', '--quiet', '--format', 'json', path], capture_output=True, text=True)
        if r.returncode:
            tally.report(f'{os.path.basename(path)}: sites', [f'exit {r.returncode}: {r.stderr[:200]}'])
            continue
        j = json.loads(r.stdout)
        sites = [x['site'] for x in j.get('peak_sites', [])] + [x['site'] for x in j.get('oom_sites', [])]
        bad = sorted({x for x in sites if INTERPRETER.search(x.replace('[before the window; freed at] ', ''))})
        problems = [f'interpreter or dispatcher sites: {bad[:3]}'] if bad else []
        if 'medium_ctx128_training_step' in os.path.basename(path):
            grads = [x for x in j.get('peak_sites', []) if x['site'] == '[backward] AccumulateGrad']
            if not grads or grads[0]['bytes'] < 1 << 30:
                problems.append(f'the gradients are not [backward] AccumulateGrad: {grads}')
        tally.report(f'{os.path.basename(path)}: {len(set(sites))} sites, all code', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--no-shared', action='store_true')
    ap.add_argument('--sanitized', action='store_true', help='a sanitizer build: bounds four times as loose')
    a = ap.parse_args()
    global LOOSE
    LOOSE = 4 if a.sanitized else 1
    tally = Tally()
    paths = sorted(glob.glob(os.path.join(a.testdata, 'snapshots', '*.pickle*')))
    shared = os.path.join(a.testdata, '..', '..', 'shared', 'snapshots')
    if not a.no_shared and os.path.isdir(shared):
        have = {os.path.basename(p).replace('.gz', '') for p in paths}
        paths += sorted(p for p in glob.glob(os.path.join(shared, '*.pickle')) if os.path.basename(p) not in have)
    with tempfile.TemporaryDirectory() as tmp:
        hostile(tally, a.binary, tmp)
        shared_rings(tally, a.binary, tmp,
                     os.path.join(a.testdata, 'snapshots', 'cs336__medium_ctx128_training_step.pickle.gz'))
        real_sites(tally, a.binary, paths)
    return tally.summary()


if __name__ == '__main__':
    sys.exit(main())
