#!/usr/bin/env python3
"""The diagnosis benchmark: does analyze find the cause of a slow step, and is the saving
it predicts the one a run with the remedy measures?

usage: bench/diagnose.py [--binary build/torch2pprof] [--python .venv/bin/python3]
                         [--out DIR] [--only NAME ...] [--check]
Each scenario of bench/scenarios.py (a small CPU loop with one known cause, and its fixed
twin) is recorded live with torch, each run in a process of its own; analyze reads the
cause's trace (the four ranks' traces together for the straggler). Printed, per scenario:
the first finding, the finding of the cause with its predicted saving a step (the
what-if of docs/reference.md), the measured saving (the run's median step time minus its
twin's, by the script's own clock; the mean where the cause is one-time), and the error;
then the median and the largest error.

--check (CI, tests/CMakeLists.txt e2e_diagnose) fails when a finding is wrong: the first
finding is not the cause's (or lacks its words), a twin is told to do what it already
does, a finding gives device advice on a CPU, or a control (no cause) claims more than 5%
of its step. Savings against measurements are printed, never asserted: they are times.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
# The manifest, read without importing torch: scenarios.py's SCENARIOS literal.
SCENARIOS = None
with open(os.path.join(HERE, 'scenarios.py')) as f:
    src = f.read()
    SCENARIOS = eval(src[src.index('SCENARIOS = {') + len('SCENARIOS = '):src.index('\n}\n') + 2],
                     {'dict': dict})

DEVICE_ADVICE = {'pageable_copies', 'synchronizations', 'tensor_cores', 'launch_bound', 'gloo_cuda'}
CONTROL_CLAIM = 0.05  # a control's largest saving, at most this share of its step


def record(python, out, name, variant):
    env = dict(os.environ, PYTHONWARNINGS='ignore',
               TORCHINDUCTOR_CACHE_DIR=os.path.join(out, f'inductor.{name}.{variant}'))
    r = subprocess.run([python, os.path.join(HERE, 'scenarios.py'), out, name, variant], capture_output=True,
                       text=True, env=env)
    if r.returncode:
        raise RuntimeError(f'{name} {variant}: exit {r.returncode}: {r.stderr.strip()[-600:]}')


def traces(out, name, variant):
    if name == 'straggler':
        return [os.path.join(out, f'straggler.rank{r}.{variant}.pt.trace.json.gz') for r in range(4)]
    return [os.path.join(out, f'{name}.{variant}.pt.trace.json.gz')]


def step_time(out, name, variant, mean):
    f = 'straggler.rank0' if name == 'straggler' else name  # a rank that waits for the straggler
    s = json.load(open(os.path.join(out, f'{f}.{variant}.steps.json')))['step_s']
    return (statistics.mean(s) if mean else statistics.median(s)) * 1e6


def analyze(binary, paths):
    r = subprocess.run([binary, 'analyze', '--format', 'json'] + paths, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f'analyze {paths[0]}: exit {r.returncode}: {r.stderr.strip()[:300]}')
    return json.loads(r.stdout)


def step_us(j):
    if 'what_if' in j:
        return float(j['what_if']['step_us'])
    return float(j['median_step_us'])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', default=os.path.join(ROOT, 'build', 'torch2pprof'))
    ap.add_argument('--python', default=os.path.join(ROOT, '.venv', 'bin', 'python3'))
    ap.add_argument('--out')
    ap.add_argument('--only', nargs='*', choices=sorted(SCENARIOS))
    ap.add_argument('--check', action='store_true')
    a = ap.parse_args()
    r = subprocess.run([a.python, '-c', 'import torch; print(torch.__version__)'], capture_output=True, text=True)
    if r.returncode:
        print(f'FAIL: {a.python} cannot import torch: run scripts/install-deps.sh (torch==2.13.0 into .venv)')
        return 1
    print(f'torch {r.stdout.strip()}; {a.binary}')
    tmp = tempfile.TemporaryDirectory()
    out = a.out or tmp.name
    os.makedirs(out, exist_ok=True)
    rows, failures, errors = [], [], []
    for name in a.only or SCENARIOS:
        m = SCENARIOS[name]
        control = m['cause'] is None
        problems = []
        try:
            for variant in (['cause'] if control else ['cause', 'twin']):
                record(a.python, out, name, variant)
            j = analyze(a.binary, traces(out, name, 'cause'))
            recs = j.get('recommendations', [])
            first = recs[0]['id'] if recs else '-'
            steps = step_us(j)
            if control:
                most = max([float(x['saving_us']) for x in recs] + [0.0])
                if most > CONTROL_CLAIM * steps:
                    problems.append(f'a control claims {most:.0f} us of its {steps:.0f} us step')
                rows.append((name, '(control)', first, most, None, None))
            else:
                want = m['finding']
                mine = next((x for x in recs if x['id'] == want), None)
                if first != want:
                    problems.append(f'first finding {first}, want {want}')
                if mine is None:
                    problems.append(f'no {want} finding')
                else:
                    missing = [w for w in m['words'] if w.lower() not in mine['text'].lower()]
                    if missing:
                        problems.append(f'{want} finding lacks {missing}: {mine["text"][:160]}')
                predicted = float(mine['saving_us']) if mine and not m.get('explain_only') else None
                measured = step_time(out, name, 'cause', m.get('mean')) - step_time(out, name, 'twin', m.get('mean'))
                twin = analyze(a.binary, traces(out, name, 'twin'))
                told = [x['id'] for x in twin.get('recommendations', []) if x['id'] in m['already']]
                if told:
                    problems.append(f'the twin, which does it already, is told {told}')
                for jj, v in ((j, 'cause'), (twin, 'twin')):
                    device = [x['id'] for x in jj.get('recommendations', []) if x['id'] in DEVICE_ADVICE]
                    if device:
                        problems.append(f'device advice on a CPU ({v}): {device}')
                error = abs(predicted - measured) / measured if predicted is not None and measured > 0 else None
                if error is not None:
                    errors.append(error)
                rows.append((name, m['cause'], first, predicted, measured, error))
        except Exception as e:  # a failed run is a failure of the benchmark
            problems.append(f'{type(e).__name__}: {e}')
            rows.append((name, m['cause'] or '(control)', '-', None, None, None))
        if problems:
            failures.append(name)
            print(f'FAIL {name}: ' + '; '.join(problems))
        else:
            print(f'ok   {name}')

    def ms(us):
        return '—' if us is None else f'{us / 1000:.2f} ms'

    print()
    print('| scenario | cause | first finding | predicted saving | measured saving | error |')
    print('|---|---|---|---|---|---|')
    for name, cause, first, predicted, measured, error in rows:
        err = '—' if error is None else f'{100 * error:.0f}%'
        claim = f'claims {ms(predicted)}' if cause == '(control)' else ms(predicted)
        print(f'| {name} | {cause} | {first} | {claim} | {ms(measured)} | {err} |')
    if errors:
        print(f'\nprediction error over {len(errors)} scenarios: median {100 * statistics.median(errors):.0f}%, '
              f'largest {100 * max(errors):.0f}%')
    print(f'{len(rows) - len(failures)} passed, {len(failures)} failed')
    return 1 if (a.check and failures) else 0


if __name__ == '__main__':
    sys.exit(main())
