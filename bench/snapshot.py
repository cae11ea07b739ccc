#!/usr/bin/env python3
"""Benchmark torch2pprof on a large CUDA memory snapshot against Python's pickle.load.

usage: bench/snapshot.py [--source SNAPSHOT] [--size 1G] [--runs 3] [--build build] [--workdir bench/data]

SOURCE (default: the real CS336 training step, ../shared/snapshots/
cs336__medium_ctx128_training_step.pickle, 3.0 MiB) is tiled into one snapshot of at
least --size: its segments and its ring repeated, each copy at addresses of its own and
later in time, so that the copies replay one after another and the result is a valid
snapshot (its ring agrees with its segments). Shared as torch shares them: frames are
shared objects everywhere (the pickle's memo references them), and each copy has frames
lists of its own, shared within the copy as an alloc shares its stack with its free (a
longer recording writes a new list per traceback). The file is cached in --workdir (git
ignores it). Then, alternating, under /usr/bin/time -v from the page cache:
  pickle.load            python3 reading the snapshot into objects (what every
                         Python viewer does first), nothing else
  convert                torch2pprof convert SNAPSHOT out.pb.gz
  analyze                torch2pprof analyze --format json SNAPSHOT
and prints a markdown table: seconds (median), MiB/s of the pickle, peak RSS and RSS over
the file's size.
"""
import argparse
import os
import pickle
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench import timed  # noqa: E402

DEFAULT_SOURCE = os.path.join(ROOT, '..', 'shared', 'snapshots', 'cs336__medium_ctx128_training_step.pickle')
SIZES = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}


def tile(source, size, out):
    with open(source, 'rb') as f:
        s = pickle.load(f)
    # Frames stay shared, so a copy costs less than the source: measured on two copies.
    one = len(pickle.dumps(tiles(s, 2), protocol=4)) - len(pickle.dumps(tiles(s, 1), protocol=4))
    copies = max(1, -(-(size - os.path.getsize(source)) // max(1, one)) + 1)
    with open(out + '.tmp', 'wb') as f:
        pickle.dump(tiles(s, copies), f, protocol=4)
    os.replace(out + '.tmp', out)
    return copies


def tiles(s, copies):
    """The snapshot s repeated: copy k at addresses k << 40 and k spans later."""
    times = [e['time_us'] for t in s['device_traces'] for e in t]
    span = (max(times) - min(times) + 1) if times else 1
    segments, traces = [], [[] for _ in s['device_traces']]
    for k in range(copies):
        shift, later = k << 40, k * span
        lists = {}

        def frames(d):
            # The copy's own list for each list of the source, the frames in it shared.
            f = d.get('frames')
            if f is None:
                return {}
            if id(f) not in lists:
                lists[id(f)] = list(f)
            return {'frames': lists[id(f)]}

        for seg in s['segments']:
            blocks = [dict(b, address=b['address'] + shift, **frames(b)) for b in seg['blocks']]
            segments.append(dict(seg, address=seg['address'] + shift, blocks=blocks, **frames(seg)))
        for d, ring in enumerate(s['device_traces']):
            traces[d].extend(
                dict(e, addr=e.get('addr', 0) + shift, time_us=e['time_us'] + later, **frames(e)) for e in ring)
    return dict(s, segments=segments, device_traces=traces)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', default=DEFAULT_SOURCE)
    ap.add_argument('--size', default='1G')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--workdir', default=os.path.join(HERE, 'data'))
    a = ap.parse_args()
    size = int(float(a.size[:-1]) * SIZES[a.size[-1]]) if a.size[-1] in SIZES else int(a.size)
    os.makedirs(a.workdir, exist_ok=True)
    name = os.path.basename(a.source).split('.')[0]
    path = os.path.join(a.workdir, f'{name}_{a.size}_v2.pickle')
    if not os.path.exists(path):
        print(f'tiling {a.source} to {a.size} ...', file=sys.stderr)
        tile(a.source, size, path)
    mb = os.path.getsize(path) / 2**20
    binary = os.path.join(a.build, 'torch2pprof')
    out = os.path.join(a.workdir, 'snapshot_bench.pb.gz')
    cmds = {
        'pickle.load': [sys.executable, '-c', f'import pickle; pickle.load(open({path!r}, "rb"))'],
        'convert': [binary, 'convert', '--force', path, out],
        'analyze --format json': [binary, 'analyze', '--format', 'json', path],
    }
    runs = {k: [] for k in cmds}
    for _ in range(a.runs):
        for k, cmd in cmds.items():
            secs, rss, _ = timed(cmd)
            runs[k].append((secs, rss))
    print(f'\n{os.path.basename(path)}: {mb:,.0f} MiB, {a.runs} runs, median\n')
    print('| command | seconds | MiB/s | peak RSS | RSS/file |')
    print('|---|---|---|---|---|')
    for k, r in runs.items():
        secs = statistics.median(s for s, _ in r)
        rss = max(m for _, m in r)
        print(f'| {k} | {secs:.2f} | {mb / secs:,.0f} | {rss / 2**20:,.0f} MiB | {rss / 2**20 / mb:.2f} |')


if __name__ == '__main__':
    main()
