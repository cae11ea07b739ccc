#!/usr/bin/env python3
"""Findings a user can act on, end to end on every real trace: each step's critical path
covers the step (its categories add up to its length, which is the step's time); the
what-ifs hold (the unchanged replay within 15% of the recorded step, each finding's saving
at most what all the changes together save, that together at most the sum of the
savings); no device advice on a trace without device work and no capture advice where
graphs replay (both read from the trace's own text); no finding holds a placeholder or a
bare id; the pprof `critical` samples add up to the steps; and where the truth is known, the findings say it: a compiled model is not told
to compile, a graphed one not to capture graphs, a V100 gets no TF32 or bfloat16 advice,
multistream's host wait names its synchronous copy, the DDP ranks get a communication
finding and the late rank is the straggler.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally, ns  # noqa: E402

PLACEHOLDER = re.compile(r'<[a-z_]+>')  # '<operator>', '<kernel>': never a name from the trace
# Device work in the trace's own text (Kineto's categories, torch 1.x's capitalised ones).
DEVICE_WORK = re.compile(r'"cat"\s*:\s*"(kernel|gpu_memcpy|gpu_memset|Kernel|Memcpy|Memset|mtia_ccp_events)"')
DEVICE_WHAT_IFS = {'pinned', 'no_sync', 'tf32', 'cuda_graphs', 'no_python'}
DEVICE_IDS = {'pageable_copies', 'synchronizations', 'tensor_cores', 'launch_bound', 'gloo_cuda', 'communication'}


def open_text(path):
    return gzip.open(path, 'rt', errors='replace') if path.endswith('.gz') else open(path, errors='replace')


def analyze(binary, *paths):
    r = subprocess.run([binary, 'analyze', '--format', 'json', *paths], capture_output=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def sleep_caller(events):
    """The innermost Python frame with a file around the first time.sleep: 'func file.py:line'."""
    frame = re.compile(r'(.+)\.py\((\d+)\): (.+)')
    sleeps = [e for e in events if e.get('name') == '<built-in function sleep>' and e.get('ph') == 'X']
    if not sleeps:
        return None
    s = sleeps[0]
    around = [e for e in events if e.get('ph') == 'X' and e.get('tid') == s['tid'] and e.get('pid') == s['pid'] and
              frame.fullmatch(e.get('name', '')) and e['ts'] <= s['ts'] and
              e['ts'] + e.get('dur', 0) >= s['ts'] + s.get('dur', 0)]
    if not around:
        return None
    m = frame.fullmatch(max(around, key=lambda e: e['ts'])['name'])
    return f'{m.group(3)} {os.path.basename(m.group(1))}.py:{m.group(2)}'


def text_of(j, rec_id):
    return ' '.join(r['text'] for r in j.get('recommendations', []) if r['id'] == rec_id)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--no-shared', action='store_true')
    a = ap.parse_args()
    c = Tally()
    real = os.path.join(a.testdata, 'real')
    traces = sorted(glob.glob(os.path.join(real, '*.json*')) + glob.glob(os.path.join(real, 'torch211', '*.pt.trace.json.gz')))
    shared = os.path.join(os.path.dirname(os.path.abspath(a.testdata)), '..', 'shared', 'traces')
    if not a.no_shared and os.path.isdir(shared):
        have = {os.path.basename(t) for t in traces}
        traces += sorted(t for t in glob.glob(os.path.join(shared, '*.json*')) + glob.glob(
            os.path.join(shared, 'torch211', '*.pt.trace.json.gz'))
                         if os.path.basename(t) not in have and 'gpt2_big' not in t)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for t in traces:
            name = os.path.basename(t)
            j = analyze(a.binary, t)
            if j is None:
                c.report(f'{name}: analyze --format json', ['failed'])
                continue
            results[name] = j
            problems = []
            steps = j['steps']
            cp = j['critical_path']
            if len(cp) != len(steps):
                problems.append(f'{len(cp)} critical paths for {len(steps)} steps')
            for s, p in zip(steps, cp):
                parts = sum(ns(v) for v in p['bound_by'].values())
                if not (parts == ns(p['length_us']) == ns(s['total_us'])):
                    problems.append(f'{p["step"]}: categories {parts} ns, length {p["length_us"]}, step {s["total_us"]}')
                if p['bound_by_most'] != max(p['bound_by'], key=lambda k: ns(p['bound_by'][k])):
                    problems.append(f'{p["step"]}: bound_by_most {p["bound_by_most"]}')
            total = sum(ns(s['total_us']) for s in steps)
            recs = j['recommendations']
            savings = sum(ns(r['saving_us']) for r in recs)
            w = j['what_if']
            step, together = ns(w['step_us']), ns(w['together_us'])
            if steps and not (0.85 * total / len(steps) <= step <= total / len(steps) + 1000):
                problems.append(f'the unchanged replay {step} ns a step, the recorded steps {total / len(steps):.0f}')
            for r in recs:
                if ns(r['saving_us']) > step - together + 1000:  # a microsecond of rounding
                    problems.append(f'{r["id"]} saves {r["saving_us"]} us, all changes together {step - together} ns')
                if r['saving_us'] > 0 and not r['what_if']:
                    problems.append(f'{r["id"]}: a saving with no change simulated')
            if step - together > savings + 1000 * len(recs):
                problems.append(f'together {step - together} ns over the sum of the savings {savings}')
            # What remains holds the device's own work: where no finding changes device time
            # (TF32, pinned copies), the steps' device work as the breakdown counts it.
            if steps and not any(r['what_if'] in ('tf32', 'pinned') for r in recs) and w['changes']:
                device = sum(ns(x['kernel_us']) + ns(x['memcpy_us']) + ns(x['memset_us']) for x in steps) / len(steps)
                if not 0.8 * device <= ns(w['device_us']) <= max(step, 1.2 * device):
                    problems.append(f'the device work that remains {w["device_us"]} us, the steps\' {device / 1e3:.0f} us')
            with open_text(t) as f:
                raw = f.read()
            # A generation loop, per token: decode_loop calls .item() once a token (the
            # recorder's loop: 24 tokens a step); no trace without such a loop has one.
            gen = j.get('generation')
            if 'decode_loop' in t:
                items = len(re.findall(r'"name": "aten::item"', raw))
                if not gen or gen['tokens_per_step'] != items // max(len(steps), 1):
                    problems.append(f'generation {gen}, aten::item {items} over {len(steps)} steps')
                elif 'a token' not in recs[0]['text'] or 'static KV cache' not in recs[0]['text']:
                    problems.append(f'the first finding is not per token: {recs[0]["text"][:100]}')
            elif gen:
                problems.append(f'a generation loop found where there is none: {gen}')
            if not DEVICE_WORK.search(raw):
                device_advice = [r['id'] for r in recs if r['what_if'] in DEVICE_WHAT_IFS or r['id'] in DEVICE_IDS]
                if device_advice:
                    problems.append(f'device advice without device work: {device_advice}')
                # fused=True on a CPU came with torch 2.4: never for torch 1.x's traces (no Kineto header).
                if '"schemaVersion"' not in raw[:4096] and any(r['what_if'] == 'fused_optimizer' for r in recs):
                    problems.append('fused=True advised on a CPU trace of torch 1.x')
            if 'GraphLaunch' in raw:
                if any(r['what_if'] == 'cuda_graphs' or 'Capture the step' in r['text'] for r in recs):
                    problems.append('capture advice where graphs replay')
            holes = [r['text'][:80] for r in recs if PLACEHOLDER.search(r['text']) or r['text'] == r['id']]
            if holes:
                problems.append(f'placeholders in {holes}')
            # convert's critical samples: the same paths, under the stacks that caused them.
            out = os.path.join(tmp, 'c.folded')
            r = subprocess.run([a.binary, 'convert', '--format', 'folded', '--sample-type', 'critical', t, out],
                               capture_output=True)
            if steps:
                got = sum(int(line.rsplit(' ', 1)[1]) for line in open(out) if line.strip()) if r.returncode == 0 else -1
                if got != total:
                    problems.append(f'convert\'s critical samples add up to {got} ns, the steps to {total}')
            c.report(f'{name}: {len(steps)} steps covered by their critical paths; a step replayed '
                     f'{step / 1e6:.2f} ms, {together / 1e6:.2f} with every change, savings {savings / 1e6:.2f}',
                     problems)

        def check(trace, what, ok, detail=''):
            if trace in results:
                c.report(f'{trace}: {what}', [] if ok(results[trace]) else [detail or 'no'])

        check('lm_compile.pt.trace.json.gz', 'a compiled model is not told to compile, but what remains',
              lambda j: 'Fuse small operations and cut Python overhead with torch.compile' not in
              json.dumps(j['recommendations']) and 'already compiled' in text_of(j, 'launch_bound'))
        check('cudagraph.pt.trace.json.gz', 'a graphed model is not told to capture graphs',
              lambda j: 'capture the step in CUDA graphs' not in json.dumps(j['recommendations']) and
              all('already replays CUDA graphs' in r['text'] for r in j['recommendations'] if r['id'] == 'launch_bound'))
        v100 = 'hta__ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz'
        check(v100, 'a V100 (compute capability 7.0) gets FP16, never TF32 or bfloat16, advice',
              lambda j: 'torch.float16' in text_of(j, 'tensor_cores') and
              'dtype=torch.bfloat16' not in json.dumps(j) and 'allow_tf32 = True' not in json.dumps(j))
        check('multistream.pt.trace.json.gz', "the host wait's finding names the synchronous copy",
              lambda j: 'meanwhile the launching thread was in synchronous copies' in text_of(j, 'pageable_copies'))
        check('multistream.pt.trace.json.gz', 'its FP32 matmuls, off the critical path, are no finding',
              lambda j: not text_of(j, 'tensor_cores'))
        # The ranks' own findings.
        ddp = sorted(glob.glob(os.path.join(real, 'torch211', 'ddp_gloo_2ranks_rank*.pt.trace.json.gz')))
        j = analyze(a.binary, *ddp)
        comm = [r for r in (j or {}).get('recommendations', []) if r['id'] == 'communication']
        c.report('two DDP ranks over gloo: a communication finding with its share and what limits it',
                 [] if comm and 'of each step' in comm[0]['text'] and 'use the nccl backend' in comm[0]['text']
                 else [f'{(j or {}).get("recommendations")}'])
        late = sorted(glob.glob(os.path.join(real, 'torch211', 'ddp_gloo_4ranks_late2_rank*.pt.trace.json.gz')))
        j = analyze(a.binary, *late) or {}
        ok = ([s['rank'] for s in j.get('stragglers', [])] == [2] and
              any(r['id'] == 'straggler' and r['text'].startswith('Rank 2 is the straggler')
                  for r in j.get('recommendations', [])) and
              sum(ns(r['saving_us']) for r in j.get('recommendations', [])) <= ns(j.get('median_step_us', 0)))
        c.report('four DDP ranks, rank 2 late: JSON stragglers names it, its finding first, savings within a step',
                 [] if ok else [f'{j.get("stragglers")} {j.get("recommendations")}'])
        # What the straggler does with its time, from its own trace: the sleep and the line
        # that called it, both read here from the trace's text.
        with open_text([t for t in late if 'rank2' in t][0]) as f:
            events = json.load(f)['traceEvents']
        caller = sleep_caller(events)
        straggler = ' '.join(r['text'] for r in j.get('recommendations', []) if r['id'] == 'straggler')
        c.report('the straggler\'s own trace says what it does: time.sleep, and the line that calls it',
                 [] if caller and f'time.sleep in {caller}' in straggler
                 else [f'caller {caller}: {straggler}'])
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
