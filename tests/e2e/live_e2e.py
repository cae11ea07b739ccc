#!/usr/bin/env python3
"""Live torch: what the installed torch (2.13.0, CPU) writes today, recorded here by
tests/live/record.py under every profiler setting users combine, converts exactly and
analyzes as torch itself counts it.

For each trace: convert_e2e's checks (every lane's wall and calls against a model of the
trace text, `work` without the waits, go tool pprof reads it, the critical samples sum to
the steps), analyze_e2e's checks (JSON complete, CSV and text agree, steps from the text,
modules against pprof -focus, and the operator table against the same run's
prof.key_averages() written beside it). The four gloo ranks: one report over them names
ranks 0-3 as their distributedInfo says, and their summaries reduce to the same report.

usage: live_e2e.py --binary BIN --python PY [--keep DIR]
PY must import torch: scripts/install-deps.sh puts torch==2.13.0 in .venv. Where it cannot,
the test says so in one line and fails: CI never skips it.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze_e2e  # noqa: E402
import convert_e2e  # noqa: E402
from e2e_common import Tally  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = os.path.join(HERE, '..', 'live', 'record.py')


def torch_version(python):
    r = subprocess.run([python, '-c', 'import torch; print(torch.__version__)'], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def ranks_problems(binary, traces, tmp):
    problems = []
    r = subprocess.run([binary, 'analyze', '--format', 'json'] + traces, capture_output=True, text=True)
    if r.returncode:
        return [f'analyze of the {len(traces)} ranks: exit {r.returncode}: {r.stderr.strip()[:200]}']
    j = json.loads(r.stdout)
    want = []
    for t in traces:  # the rank each trace's distributedInfo names
        import gzip
        raw = open(t, 'rb').read()
        doc = json.loads(gzip.decompress(raw) if raw[:2] == b'\x1f\x8b' else raw)
        want.append(doc['distributedInfo']['rank'])
    got = sorted(x['rank'] for x in j.get('ranks', []))
    if got != sorted(want) or sorted(want) != [0, 1, 2, 3]:
        problems.append(f'ranks {got}, distributedInfo says {sorted(want)}')
    sums = []
    for t in traces:
        out = os.path.join(tmp, os.path.basename(t) + '.summary.json')
        s = subprocess.run([binary, 'summarize', t, '-o', out], capture_output=True, text=True)
        if s.returncode:
            problems.append(f'summarize {os.path.basename(t)}: exit {s.returncode}: {s.stderr.strip()[:200]}')
        sums.append(out)
    if not problems:
        reduced = subprocess.run([binary, 'analyze', '--format', 'json'] + sums, capture_output=True, text=True)
        if reduced.returncode or json.loads(reduced.stdout).get('ranks') != j.get('ranks'):
            problems.append('the reduce of the four summaries is not the report over the four traces')
    return problems


def as_exported(entry):
    """A stack entry as convert gives it back from export_stacks' text, by the documented
    rules (docs/reference.md, "Folded stacks") applied to what torch held: export_stacks
    writes ' ', ';', '\\t' and '\\n' as '_'; a Python frame "path(N): func", "nn.Module: X"
    and the built-ins get their own spaces back (a space inside a path does not); convert
    drops " at 0x..." addresses."""
    cut = entry.translate(str.maketrans(' ;\t\n', '____'))
    m = re.match(r'^(.*\(\d+\)): (\S+)$', entry)
    if m:
        return cut[:len(m.group(1))] + ': ' + m.group(2)
    if re.match(r'^nn\.Module: \S+$', entry) or re.match(r'^<built-in function \S+>$', entry):
        return entry
    m = re.match(r'^(<built-in method \S+ of \S+ object)( at 0x[0-9a-f]+)?>$', entry)
    if m:
        return m.group(1) + '>'
    return cut


def export_stacks_problems(binary, out, tmp):
    """convert on torch's export_stacks: each stack and its microseconds as torch held them."""
    stacks = os.path.join(out, 'export_stacks.stacks.txt')
    pb = os.path.join(tmp, 'export_stacks.pb.gz')
    r = subprocess.run([binary, 'convert', stacks, pb], capture_output=True, text=True)
    if r.returncode:
        return [f'convert: exit {r.returncode}: {r.stderr.strip()[:200]}']
    want = collections.Counter()
    for e in json.load(open(os.path.join(out, 'export_stacks.expected.json'))):
        want[';'.join(as_exported(x) for x in e['stack'])] += e['us']
    raw = convert_e2e.Raw(pb)
    got = convert_e2e.pprof_stacks(raw)
    problems = [] if raw.types == ['time'] else [f'sample types {raw.types}']
    if got != dict(want) or not want:
        problems.append(f'{len(got)} stacks, torch held {len(want)}: {sorted(set(got.items()) ^ set(want.items()))[:2]}')
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--python', required=True)
    ap.add_argument('--keep', help='record into this folder and keep it (default: a temporary one)')
    a = ap.parse_args()
    version = torch_version(a.python)
    if version is None:
        print(f'FAIL: {a.python} cannot import torch: run scripts/install-deps.sh (it installs torch==2.13.0 '
              f'into .venv); the live tests are never skipped')
        print('0 passed, 1 failed')
        return 1
    print(f'torch {version} from {a.python}')
    with tempfile.TemporaryDirectory() as tmp:
        out = a.keep or os.path.join(tmp, 'live')
        env = dict(os.environ, PYTHONWARNINGS='ignore', TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, 'inductor'))
        r = subprocess.run([a.python, RECORD, out], capture_output=True, text=True, env=env)
        if r.returncode:
            print(f'FAIL: recording: exit {r.returncode}: {r.stderr.strip()[-800:]}')
            print('0 passed, 1 failed')
            return 1
        manifest = json.load(open(os.path.join(out, 'manifest.json')))
        conv, an, tally = convert_e2e.Checks(a.binary, tmp), analyze_e2e.Checks(a.binary), Tally()
        traces = [os.path.join(out, f) for files in manifest['traces'].values() for f in files]
        for t in traces:
            for check in (conv.check_trace, an.check):
                try:
                    check(t)
                except Exception as e:  # a crash of a check is a failure too
                    tally.report(f'{os.path.basename(t)} {check.__name__}', [f'{type(e).__name__}: {e}'])
        # Every trace holds its steps (the schedule's active steps), and the keyed tables
        # were written beside them by torch.
        for t in traces:
            base = os.path.basename(t)
            name = base.split('.pt.trace.json')[0]
            problems = [] if os.path.exists(os.path.join(out, name + '.key_averages.json')) else ['no key_averages']
            j = json.loads(subprocess.run([a.binary, 'analyze', '--format', 'json', t], capture_output=True,
                                          text=True).stdout or '{}')
            if len(j.get('steps', [])) < 2:
                problems.append(f'{len(j.get("steps", []))} steps')
            # FSDP in a world of one rank shards nothing: its finding comes first there, and
            # nowhere else (the gloo ranks have four, the rest none).
            ids = [r['id'] for r in j.get('recommendations', [])]
            if name == 'fsdp_one_rank' and ids[:1] != ['fsdp_single_rank']:
                problems.append(f'findings {ids}, want fsdp_single_rank first')
            if name != 'fsdp_one_rank' and 'fsdp_single_rank' in ids:
                problems.append('an FSDP finding without FSDP at one rank')
            tally.report(f'{base}: steps and key_averages', problems)
        tally.report('export_stacks: each stack and its microseconds as torch held them',
                     export_stacks_problems(a.binary, out, tmp))
        ranks = [os.path.join(out, f) for f in manifest['traces'].get('ddp', [])]
        tally.report('four gloo ranks: their report and reduce', ranks_problems(a.binary, ranks, tmp))
        passed = conv.passed + an.passed + tally.passed
        failed = conv.failed + an.failed + tally.failed
        print(f'{len(traces)} live traces by torch {manifest["torch"]}')
        print(f'{passed} passed, {failed} failed')
        return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
