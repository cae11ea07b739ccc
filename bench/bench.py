#!/usr/bin/env python3
"""Benchmark torch2pprof convert against the parse-only floor, side by side.

usage: bench/bench.py [--sizes 50M,500M,5G] [--source TRACE] [--runs 3] [--build build]
                      [--workdir bench/data]

For each size it tiles a real trace from ../shared/traces to that size (cached in
--workdir, never committed), then alternates runs of
  convert              torch2pprof convert (all cores)
  convert --threads 1  the same on one thread (its output must be byte-identical)
  floor                torch2pprof_floor: inflate + visit every event, nothing else
  analyze              torch2pprof analyze --format json
under /usr/bin/time -v, and prints a markdown table: MB/s of uncompressed JSON
(median run), peak RSS, and convert's time as a multiple of the floor's.
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, '..', 'shared')
DEFAULT_SOURCE = os.path.join(SHARED, 'traces', 'hta__ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz')


def timed(cmd):
    """Wall seconds and peak RSS (KB) of one run, from /usr/bin/time -v."""
    r = subprocess.run(['/usr/bin/time', '-v'] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f'failed: {" ".join(cmd)}\n{r.stderr[-2000:]}')
    wall = re.search(r'Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)', r.stderr)
    h = int(wall.group(1) or 0)
    secs = h * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', r.stderr).group(1))
    return secs, rss


def ensure_trace(source, size, workdir):
    path = os.path.join(workdir, f'tiled_{size}.json')
    if not os.path.exists(path):
        print(f'generating {path} from {os.path.basename(source)} ...', file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(SHARED, 'tools', 'tile_trace.py'), source, path, '--size', size],
                       check=True)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--sizes', default='50M,500M,5G')
    ap.add_argument('--source', default=DEFAULT_SOURCE)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--workdir', default=os.path.join(HERE, 'data'))
    ap.add_argument('--traces', nargs='*', default=[], help='extra existing traces to measure as they are')
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    binary = os.path.join(a.build, 'torch2pprof')
    floor = os.path.join(a.build, 'torch2pprof_floor')
    inputs = [ensure_trace(a.source, s, a.workdir) for s in a.sizes.split(',') if s] + a.traces

    cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), platform.machine())
    print(f'Machine: {cpu}, {os.cpu_count()} cores; median of {a.runs} alternating runs.\n')
    print('| input | JSON | convert | MB/s | peak RSS | RSS/JSON | --threads 1 | floor | convert/floor '
          '| analyze | analyze/floor | analyze RSS | analyze RSS/JSON |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    for path in inputs:
        json_bytes = int(subprocess.run(['sh', '-c', f'gzip -dc -f "{path}" | wc -c'], capture_output=True,
                                        text=True).stdout)
        out, out1 = os.path.join(a.workdir, 'bench.pb.gz'), os.path.join(a.workdir, 'bench1.pb.gz')
        conv, conv1, flo, ana = [], [], [], []
        floor_ok = json_bytes < (4 << 30)  # the floor holds the whole text: simdjson's 4 GiB limit
        for _ in range(a.runs):
            conv.append(timed([binary, 'convert', path, out]))
            conv1.append(timed([binary, 'convert', '--threads', '1', path, out1]))
            if floor_ok:
                flo.append(timed([floor, path]))
            ana.append(timed([binary, 'analyze', '--format', 'json', path]))
        if open(out, 'rb').read() != open(out1, 'rb').read():
            sys.exit(f'{path}: --threads 1 output differs')
        t = statistics.median(s for s, _ in conv)
        t1 = statistics.median(s for s, _ in conv1)
        rss = max(r for _, r in conv) * 1024
        tf = statistics.median(s for s, _ in flo) if flo else None
        mb = json_bytes / 1e6
        ta = statistics.median(s for s, _ in ana)
        rss_a = max(r for _, r in ana) * 1024
        print(f'| {os.path.basename(path)} | {mb:,.0f} MB | {t:.2f} s | {mb / t:,.0f} | {rss / 1e6:,.0f} MB | '
              f'{rss / json_bytes:.2f} | {t1:.2f} s | ' +
              (f'{tf:.2f} s | {t / tf:.2f}x |' if tf else 'n/a (> 4 GiB) | n/a |') + f' {ta:.2f} s | ' +
              (f'{ta / tf:.2f}x |' if tf else 'n/a |') + f' {rss_a / 1e6:,.0f} MB | {rss_a / json_bytes:.2f} |')
    print('\n--threads 1 output was byte-identical to the default for every input.')


if __name__ == '__main__':
    main()
