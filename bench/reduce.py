#!/usr/bin/env python3
"""The reduce of analyze over many ranks: `torch2pprof analyze *.summary.json`.

Summarizes real DDP ranks (by default the four of testdata/real/torch211/
ddp_gloo_4ranks_late2_*), then makes --ranks summaries from them: rank ids 0..N-1, each
call and step time moved by a few microseconds per rank, so no two ranks are alike.
Times the reduce over all of them (median of --runs, from the page cache) under
/usr/bin/time -v and prints one markdown row: ranks, bytes of summaries, wall seconds,
peak RSS. The map (summarize) is timed once per source trace for scale.

  bench/reduce.py --build build --ranks 1024
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    r = subprocess.run(['/usr/bin/time', '-v'] + cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f'{cmd[:3]}: exit {r.returncode}: {r.stderr[-400:]}')
    wall = re.search(r'Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)', r.stderr)
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', r.stderr).group(1)) * 1024
    return seconds, rss, r.stdout


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default=os.path.join(root, 'build'))
    ap.add_argument('--ranks', type=int, default=1024)
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--traces', nargs='*',
                    default=sorted(glob.glob(os.path.join(root, 'testdata/real/torch211/ddp_gloo_4ranks_late2_*.gz'))))
    a = ap.parse_args()
    binary = os.path.join(a.build, 'torch2pprof')
    with tempfile.TemporaryDirectory() as work:
        sources = []
        map_seconds = []
        for k, t in enumerate(a.traces):
            out = os.path.join(work, f'source{k}.summary.json')
            start = time.monotonic()
            subprocess.run([binary, 'summarize', '--quiet', t, '-o', out], check=True)
            map_seconds.append(time.monotonic() - start)
            sources.append(json.load(open(out)))
        total = 0
        for r in range(a.ranks):
            s = json.loads(json.dumps(sources[r % len(sources)]))
            s['rank'], s['world_size'] = r, a.ranks
            shift = (r * 7919) % 97 * 1000  # up to 96 us, different on every rank
            s['calls'] = [[c, start, dur + shift] for c, start, dur in s['calls']]
            for step in s['steps']:
                step['total_ns'] += shift
                step['other_ns'] += shift
            s['step_median_ns'] += shift
            path = os.path.join(work, f'rank{r:05d}.summary.json')
            with open(path, 'w') as f:
                f.write(json.dumps(s, separators=(',', ':')) + '\n')
            total += os.path.getsize(path)
        for k in range(len(sources)):
            os.remove(os.path.join(work, f'source{k}.summary.json'))
        files = sorted(glob.glob(os.path.join(work, 'rank*.summary.json')))
        runs = [timed([binary, 'analyze', '--quiet'] + files) for _ in range(a.runs)]
        wall = statistics.median(r[0] for r in runs)
        rss = statistics.median(r[1] for r in runs)
        first = runs[0][2].split('\n')
        late = next((x.strip() for x in first if 'arrives last' in x), '(no late rank)')
        print(f'map: summarize {len(a.traces)} traces, median {statistics.median(map_seconds):.3f} s each')
        print('| ranks | summaries | reduce wall | peak RSS |')
        print('|---|---|---|---|')
        print(f'| {a.ranks} | {total / 2**20:.1f} MiB | {wall:.3f} s | {rss / 2**20:.0f} MiB |')
        print(f'report: {late}')


if __name__ == '__main__':
    main()
