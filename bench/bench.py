#!/usr/bin/env python3
"""Benchmark torch2pprof convert and analyze against the parse-only floor, side by side.

usage: bench/bench.py [--sizes 2G,5G] [--source TRACE] [--runs 3] [--build build] [--threads N]
                      [--workdir bench/data] [--traces T...] [--no-pprof]

Inputs: SOURCE itself (default: the real 185 MiB with_stack trace gpt2_big from
../shared/traces/torch211), uncompressed once into --workdir, and SOURCE tiled to each
of --sizes with ../shared/tools/tile_trace.py (cached in --workdir, never committed).
For each input it alternates runs of
  floor                  torch2pprof_floor: the text mapped from the page cache, every
                         event's ph/name/pid/tid/ts/dur visited with simdjson on-demand
  convert                all cores, then --threads 1 (the bytes must be identical)
  analyze --format json  all cores, then --threads 1
under /usr/bin/time -v and prints markdown tables: MiB/s of uncompressed JSON (median
run), peak RSS, and the time as a multiple of the floor's, at each thread count.
It then measures what the machine allows: `cores` one-thread converts of SOURCE side by
side against one alone. On a shared VM a busy core slows its neighbours; the ceiling is
cores x (one alone) / (side by side), the speed-up perfectly parallel convert work could
reach, and the table's speed-up is also given as a fraction of it.
For SOURCE as stored (.json.gz) it also times convert against the inflater alone
(torch2pprof_floor --inflate, the same ISA-L or zlib inflater), and how long
`go tool pprof -top` takes to read the profile convert wrote.
"""
import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, '..', 'shared')
DEFAULT_SOURCE = os.path.join(SHARED, 'traces', 'torch211', 'gpt2_big.pt.trace.json.gz')


def timed(cmd):
    """Wall seconds and peak RSS (bytes) of one run, from /usr/bin/time -v."""
    r = subprocess.run(['/usr/bin/time', '-v'] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f'failed: {" ".join(cmd)}\n{r.stderr[-2000:]}')
    wall = re.search(r'Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)', r.stderr)
    secs = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    rss = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', r.stderr).group(1))
    return secs, rss * 1024, r.stdout


def side_by_side(cmds):
    """Wall seconds until every one of cmds (started together) has finished."""
    import time
    start = time.monotonic()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in cmds]
    for p in procs:
        if p.wait() != 0:
            sys.exit(f'failed: {" ".join(p.args)}')
    return time.monotonic() - start


def median(runs):
    return statistics.median(s for s, _, _ in runs), max(r for _, r, _ in runs)


def plain_copy(source, workdir):
    name = os.path.basename(source)
    name = name[:-3] if name.endswith('.gz') else name
    path = os.path.join(workdir, name)
    if not os.path.exists(path):
        with open(path + '.tmp', 'wb') as out:
            subprocess.run(['gzip', '-dcf', source], stdout=out, check=True)
        os.rename(path + '.tmp', path)
    return path


def tiled(source, size, workdir):
    path = os.path.join(workdir, f'tiled_{size}.json')
    if not os.path.exists(path):
        print(f'generating {path} from {os.path.basename(source)} ...', file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(SHARED, 'tools', 'tile_trace.py'), source, path + '.tmp', '--size',
                        size], check=True)
        os.rename(path + '.tmp', path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--sizes', default='2G,5G')
    ap.add_argument('--source', default=DEFAULT_SOURCE)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--workdir', default=os.path.join(HERE, 'data'))
    ap.add_argument('--traces', nargs='*', default=[], help='extra existing traces to measure as they are')
    ap.add_argument('--threads', type=int, default=0, help='the "all cores" thread count (default: every core)')
    ap.add_argument('--no-pprof', action='store_true', help="skip timing go tool pprof's read of the profile")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    binary = os.path.join(a.build, 'torch2pprof')
    floor = os.path.join(a.build, 'torch2pprof_floor')
    cores = a.threads or os.cpu_count()
    inputs = [plain_copy(a.source, a.workdir)]
    inputs += [tiled(a.source, s, a.workdir) for s in a.sizes.split(',') if s] + a.traces
    out, out1 = os.path.join(a.workdir, 'bench.pb.gz'), os.path.join(a.workdir, 'bench1.pb.gz')

    cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')),
               platform.machine())
    print(f'Machine: {cpu}, {os.cpu_count()} cores; {cores} threads for "all"; median of {a.runs} alternating runs; '
          'RSS is the largest run\'s.\n')
    print('| input | JSON | floor | convert, all | MiB/s | ×floor | RSS/JSON | convert, 1 thread | MiB/s | ×floor '
          '| RSS/JSON | speed-up | analyze, all | ×floor | RSS/JSON | analyze, 1 thread | ×floor | RSS/JSON |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    floor_mbs = None
    plain_convert = {}
    for path in inputs:
        json_bytes = os.path.getsize(path)
        floor_ok = json_bytes < (4 << 30)  # the floor holds the whole text: simdjson's 4 GiB limit
        flo, conv, conv1, ana, ana1 = [], [], [], [], []
        subprocess.run(['cat', path], stdout=subprocess.DEVNULL, check=True)  # every run from the page cache
        for _ in range(a.runs):
            if floor_ok:
                flo.append(timed([floor, path]))
            conv.append(timed([binary, 'convert', '--threads', str(cores), path, out]))
            conv1.append(timed([binary, 'convert', '--threads', '1', path, out1]))
            ana.append(timed([binary, 'analyze', '--threads', str(cores), '--format', 'json', path]))
            ana1.append(timed([binary, 'analyze', '--threads', '1', '--format', 'json', path]))
        with open(out, 'rb') as f, open(out1, 'rb') as f1:
            if f.read() != f1.read():
                sys.exit(f'{path}: --threads 1 output differs')
        mb = json_bytes / 2**20
        if flo:
            tf, _ = median(flo)
            floor_mbs = mb / tf
            floor_cell = f'{tf:.2f} s'
        else:
            # Beyond simdjson's single-document limit: the previous input's floor rate,
            # the same events tiled, stands in.
            tf = mb / floor_mbs if floor_mbs else None
            floor_cell = f'({tf:.2f} s)' if tf else 'n/a'

        def cells(runs):
            t, rss = median(runs)
            ratio = f'{t / tf:.2f}' if tf else 'n/a'
            return t, f'{t:.2f} s | {mb / t:,.0f} | {ratio} | {rss / json_bytes:.2f}'

        def short(runs):
            t, rss = median(runs)
            ratio = f'{t / tf:.2f}' if tf else 'n/a'
            return f'{t:.2f} s | {ratio} | {rss / json_bytes:.2f}'

        t, c = cells(conv)
        t1, c1 = cells(conv1)
        plain_convert[path] = t
        if path == inputs[0]:
            ceiling_speedup = t1 / t
        print(f'| {os.path.basename(path)} | {mb:,.0f} MiB | {floor_cell} | {c} | {c1} | {t1 / t:.2f}× | '
              f'{short(ana)} | {short(ana1)} |')
    # The machine's own ceiling: `cores` one-thread converts side by side against one alone.
    alone, together = [], []
    outs = [os.path.join(a.workdir, f'side{k}.pb.gz') for k in range(cores)]
    for _ in range(a.runs):
        alone.append(side_by_side([[binary, 'convert', '--threads', '1', inputs[0], outs[0]]]))
        together.append(side_by_side([[binary, 'convert', '--threads', '1', inputs[0], o] for o in outs]))
    for o in outs:
        os.remove(o)
    ta, tt = statistics.median(alone), statistics.median(together)
    ceiling = cores * ta / tt
    print(f'\nThe machine\'s ceiling: {cores} one-thread converts of {os.path.basename(inputs[0])} side by side take '
          f'{tt:.2f} s against {ta:.2f} s for one alone, so perfectly parallel work could run {ceiling:.2f}× as fast '
          f'on {cores} threads; convert\'s speed-up on it is {ceiling_speedup / ceiling:.0%} of that.')
    print('\n`--threads 1` output was byte-identical to the default for every input. Floors in parentheses are '
          'the previous input\'s floor rate: the floor holds the whole text and stops at 4 GiB.')

    if a.source.endswith('.gz'):
        gz = a.source
        inf, cz, cz1 = [], [], []
        for _ in range(a.runs):
            inf.append(timed([floor, '--inflate', gz]))
            cz.append(timed([binary, 'convert', '--threads', str(cores), gz, out]))
            cz1.append(timed([binary, 'convert', '--threads', '1', gz, out1]))
        library = re.search(r'inflate \(([^)]*)\)', inf[0][2]).group(1)
        ti, _ = median(inf)
        tz, rz = median(cz)
        tz1, _ = median(cz1)
        tp = plain_convert[inputs[0]]
        print(f'\nCompressed input, {os.path.basename(gz)} ({os.path.getsize(gz) / 2**20:,.0f} MiB): '
              f'{library} alone inflates it in {ti:.3f} s; convert takes {tz:.2f} s on all cores '
              f'({tz1:.2f} s on 1 thread, {rz / 2**20:,.0f} MiB RSS) against {tp:.2f} s for the plain JSON: '
              f'gzip costs {tz - tp:+.3f} s, {(tz - tp) / ti:.2f}× the inflate alone.')
    go = shutil.which('go')
    if go and not a.no_pprof:
        subprocess.run([binary, 'convert', inputs[0], out], check=True, capture_output=True)
        reads = [timed([go, 'tool', 'pprof', '-top', out]) for _ in range(a.runs)]
        tr, rr = median(reads)
        print(f'\n`go tool pprof -top` reads the profile of {os.path.basename(inputs[0])} '
              f'({os.path.getsize(out) / 2**20:.1f} MiB) in {tr:.2f} s, {rr / 2**20:,.0f} MiB RSS.')


if __name__ == '__main__':
    main()
