#!/usr/bin/env python3
"""Every command's output on every trace, made by several runs that must agree byte for byte.

Two uses:
- as a test (ctest e2e_same_output): one binary at --threads 1, 2 and 8 on every trace
  under testdata/: the bytes never depend on the threads;
- around a refactoring: the binary before and the binary after, on testdata/ and on
  ../shared/traces (`--binary OLD --binary NEW --threads 2 DIR...`).

For each trace: convert to pprof, folded, pstats and gpu folded; analyze as text, JSON,
CSV and HTML; compare against itself as text and JSON; the standard error of each. For
every group of `*rank*` files in one folder: convert -o, analyze and compare over the
ranks. Gzipped outputs are compared inflated (the profile), and their compressed bytes
are reported apart (`--gzip-bytes` makes those count too).

Prints one line per difference and 'N outputs, N differ' last; exit 1 when any differ.
"""
import argparse
import gzip
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def traces_under(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                out += [os.path.join(root, f) for f in files
                        if re.search(r'\.json(\.gz)?$', f) and not f.endswith('key_averages.json')]
        else:
            out.append(p)
    return sorted(out)


def jobs_for(traces):
    """(name, args, output files) for every command; OUT/ is replaced by the run's folder."""
    jobs = []
    for t in traces:
        key = os.path.basename(t)
        jobs += [
            (f'{key}/convert', ['convert', '--critical', t, 'OUT/c.pb.gz'], ['c.pb.gz']),  # every sample type
            (f'{key}/folded', ['convert', '--format', 'folded', t, 'OUT/c.folded'], ['c.folded']),
            (f'{key}/pstats', ['convert', '--format', 'pstats', t, 'OUT/c.prof'], ['c.prof']),
            (f'{key}/gpu.folded', ['convert', '--sample-type', 'gpu', '--format', 'folded', t, 'OUT/g.folded'],
             ['g.folded']),
            (f'{key}/analyze', ['analyze', '-top', '0', t], []),
            (f'{key}/analyze.json', ['analyze', '--format', 'json', t], []),
            (f'{key}/analyze.csv', ['analyze', '--format', 'csv', t], []),
            (f'{key}/analyze.html', ['analyze', '--format', 'html', t], []),
            (f'{key}/compare', ['compare', '-top', '0', t, t], []),
            (f'{key}/compare.json', ['compare', '--format', 'json', '-o', 'OUT/d.pb.gz', t, t], ['d.pb.gz']),
        ]
    groups = {}
    for t in traces:
        m = re.match(r'(.*rank)[-_]?\d+', os.path.basename(t))
        if m:
            groups.setdefault((os.path.dirname(t), m.group(1)), []).append(t)
    for (_, stem), ranks in sorted(groups.items()):
        if len(ranks) < 2:
            continue
        jobs += [
            (f'{stem}*/convert', ['convert', '-o', 'OUT/r.pb.gz'] + ranks, ['r.pb.gz']),
            (f'{stem}*/analyze', ['analyze', '-top', '0'] + ranks, []),
            (f'{stem}*/analyze.json', ['analyze', '--format', 'json'] + ranks, []),
            (f'{stem}*/compare', ['compare', '--format', 'json', '-o', 'OUT/rd.pb.gz', ranks[0], ranks[1]],
             ['rd.pb.gz']),
        ]
    return jobs


def run_one(binary, threads, job, scratch):
    name, args, files = job
    with tempfile.TemporaryDirectory(dir=scratch) as out:
        argv = [binary] + [a.replace('OUT/', out + '/') for a in args[:1]] + ['--threads', str(threads)] + \
               [a.replace('OUT/', out + '/') for a in args[1:]]
        r = subprocess.run(argv, capture_output=True)
        got = {'status': str(r.returncode).encode(), 'stdout': r.stdout,
               'stderr': r.stderr.replace(out.encode(), b'OUT')}
        for f in files:
            path = os.path.join(out, f)
            raw = open(path, 'rb').read() if os.path.exists(path) else b'(missing)'
            if raw[:2] == b'\x1f\x8b':
                got[f + ' (gzip bytes)'] = raw
                raw = gzip.decompress(raw)
            got[f] = raw
        return name, got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--binary', action='append', required=True, help='repeatable: each binary runs every job')
    ap.add_argument('--threads', default='1,2,8', help='comma-separated --threads values (default 1,2,8)')
    ap.add_argument('--gzip-bytes', action='store_true', help='compressed bytes must agree too')
    ap.add_argument('--jobs', type=int, default=2, help='commands run at once (default 2)')
    ap.add_argument('--exclude', help='leave out traces whose name matches this regular expression')
    ap.add_argument('paths', nargs='+', help='traces, or folders searched for *.json and *.json.gz')
    a = ap.parse_args()
    traces = traces_under(a.paths)
    if a.exclude:
        traces = [t for t in traces if not re.search(a.exclude, os.path.basename(t))]
    if not traces:
        sys.exit('no traces under ' + ' '.join(a.paths))
    runs = [(b, int(t)) for b in a.binary for t in a.threads.split(',')]
    if len(runs) < 2:
        sys.exit('nothing to compare: give two binaries or two --threads values')
    jobs = jobs_for(traces)
    compared = differ = 0
    gzip_only = 0
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(a.jobs) as pool:
        for job in jobs:
            results = list(pool.map(lambda run: run_one(run[0], run[1], job, scratch), runs))
            first = results[0][1]
            for (binary, threads), (_, got) in zip(runs[1:], results[1:]):
                for key, value in first.items():
                    compared += 1
                    if got.get(key) == value:
                        continue
                    if key.endswith('(gzip bytes)') and not a.gzip_bytes:
                        gzip_only += 1
                        continue
                    differ += 1
                    print(f'DIFF {job[0]} {key}: {runs[0][0]} --threads {runs[0][1]} vs {binary} --threads {threads}'
                          f' ({len(value)} vs {len(got.get(key, b""))} bytes)')
    note = f' ({gzip_only} gzip streams differ in their compressed bytes only)' if gzip_only else ''
    print(f'{compared} outputs over {len(traces)} traces, {differ} differ{note}')
    sys.exit(1 if differ else 0)


if __name__ == '__main__':
    main()
