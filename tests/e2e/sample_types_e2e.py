#!/usr/bin/env python3
"""Every --sample-type of convert, in every output format it applies to, for each kind of
input convert reads (a trace, a memory snapshot, profiles merged with -o), read back by
the real clients:
- pprof: `go tool pprof -raw` reads it, it holds that type alone, and its total equals the
  total of that type in the profile convert writes by default;
- folded stacks: the counts add up to the same total;
- pstats (traces): Python's pstats loads it for every type in nanoseconds; any other is a
  usage error (exit 2) in one line, as pstats holds times.
The types are those the default profile lists (so a new type is covered as it comes).

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import os
import pstats
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402


def raw_totals(path):
    """{sample type: total} of a pprof file, as go tool pprof -raw reads it."""
    r = subprocess.run(['go', 'tool', 'pprof', '-raw', path], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f'go tool pprof: {r.stderr[-300:]}')
    units = dict(t.replace('[dflt]', '').split('/') for t in re.search(r'\nSamples:\n(.*?)\n', r.stdout).group(1).split())
    types = list(units)  # the default type is marked [dflt]
    totals = [0] * len(types)
    rows = r.stdout.split('\nSamples:\n', 1)[1].split('\nLocations', 1)[0].split('\n')[1:]
    for row in rows:
        fields = row.split(':')[0].split()
        if len(fields) == len(types) and all(re.fullmatch(r'-?\d+', x) for x in fields):
            for i, x in enumerate(fields):
                totals[i] += int(x)
    raw_totals.units = units
    return dict(zip(types, totals))


def check(c, binary, tmp, path, formats, merged=None):
    """`merged`: profiles merged with -o, instead of `path` converted alone."""
    name = 'profiles' if merged else os.path.basename(path).split('.')[0]
    default = os.path.join(tmp, 'default.pb.gz')
    inputs = merged or [path]
    subprocess.run([binary, 'convert', '--quiet', '-o', default] + inputs, check=True)
    want = raw_totals(default)
    units = raw_totals.units
    for t, total in want.items():
        for fmt in formats:
            out = os.path.join(tmp, f'{name}_{t}.{fmt}')
            r = subprocess.run([binary, 'convert', '--quiet', '--sample-type', t, '-o', out] + inputs,
                               capture_output=True, text=True)
            problems = []
            if fmt == 'pstats' and units[t] != 'nanoseconds':
                if r.returncode != 2 or r.stderr.count('\n') != 1 or os.path.exists(out):
                    problems.append(f'exit {r.returncode}, want a one-line usage error: {r.stderr[-200:]!r}')
            elif r.returncode:
                problems.append(f'exit {r.returncode}: {r.stderr.strip()[-200:]}')
            elif fmt == 'pb.gz':
                got = raw_totals(out)
                if list(got) != [t] or got[t] != total:
                    problems.append(f'pprof reads {got}, want {{{t!r}: {total}}}')
            elif fmt == 'folded':
                with open(out) as f:
                    s = sum(int(line.rsplit(' ', 1)[1]) for line in f if line.strip())
                if s != total:
                    problems.append(f'folded counts add up to {s}, the profile holds {total}')
            elif fmt == 'pstats':
                try:
                    pstats.Stats(out)
                except Exception as e:
                    problems.append(f'pstats: {type(e).__name__}: {e}')
            c.report(f'{name}: --sample-type {t} as .{fmt}', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    a = ap.parse_args()
    c = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        check(c, a.binary, tmp, os.path.join(a.testdata, 'real', 'torch211', 'lm_train.pt.trace.json.gz'),
              ['pb.gz', 'folded', 'pstats'])
        check(c, a.binary, tmp, os.path.join(a.testdata, 'snapshots', 'oom_train.pickle.gz'), ['pb.gz', 'folded'])
        # Two ranks' profiles, as convert wrote them, merged.
        profiles = []
        for r in (0, 1):
            trace = os.path.join(a.testdata, 'real', 'torch211', f'ddp_gloo_2ranks_rank{r}.pt.trace.json.gz')
            profiles.append(os.path.join(tmp, f'rank{r}.pb.gz'))
            subprocess.run([a.binary, 'convert', '--quiet', trace, profiles[-1]], check=True)
        check(c, a.binary, tmp, None, ['pb.gz', 'folded', 'pstats'], merged=profiles)
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
