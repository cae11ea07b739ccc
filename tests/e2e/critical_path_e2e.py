#!/usr/bin/env python3
"""analyze's critical path against HTA's critical_path_analysis (the port in
hta_critical_path.py, from hta/analyzers/critical_path_analysis.py at f4d0062).

1. Where both define the path alike, they must agree to the nanosecond. Random traces are
   made here of what both read the same way: one thread of back-to-back top-level
   operators launching kernels on one stream (a kernel starts a few microseconds after
   its launch when the stream is idle, else just after the kernel before it) and
   synchronizations that Kineto records on both sides (cudaStreamSynchronize and its
   cuda_sync "Stream Sync" event). Per step and per category, torch2pprof's time equals
   HTA's plus the one documented difference such a trace has (docs/reference.md, critical
   path): a blocking call's own time after the work it waited for ended (HTA weighs a
   blocking call's edge 0, so that time is on no path; torch2pprof puts it on the call,
   so that the path covers the step).
2. On the shared real traces the documented differences show:
   - a GPU-bound step (the V100 trace's middle steps): both put the same kernels on the
     path; every category agrees within 1% of the step;
   - CUDA graphs (cudagraph): the replayed kernels and the gaps between them agree to the
     nanosecond; HTA has no launch edge for cudaGraphLaunch, so the host's part is ours only;
   - a host-bound step (lm_train): both are bound by the CPU, HTA's path shorter than the
     step by the host's time between top-level operators and in blocking calls, which it
     weighs 0;
   - multistream, whose trace has no cuda_sync events: HTA puts the 40 ms that the host
     waits in a synchronous device-to-host cudaMemcpyAsync on the CPU (its runtime-lock
     edge gives the call its whole duration), torch2pprof on the copy it waited for.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hta_critical_path as hta  # noqa: E402
from e2e_common import Tally, ns, read_events  # noqa: E402


def make_trace(seed):
    """A random trace both tools read alike, and per step the documented difference: the
    time of blocking calls after the work they waited for ended."""
    rng = random.Random(seed)
    ev = []
    corr = [0]
    t = 1_000_000_000_000  # ns
    gpu_end = 0  # the stream's last end

    def x(name, cat, pid, tid, ts, end, **args):
        e = {'ph': 'X', 'cat': cat, 'name': name, 'pid': pid, 'tid': tid, 'ts': f'{ts / 1000:.3f}',
             'dur': f'{(end - ts) / 1000:.3f}'}
        if args:
            e['args'] = args
        ev.append(e)

    adjust = []
    for step in range(rng.randint(2, 4)):
        start = t
        blocked = 0
        for _ in range(rng.randint(3, 12)):
            op_start = t
            if rng.random() < 0.25:  # a synchronization: an op holding cudaStreamSynchronize
                t += rng.randint(2_000, 9_000)
                call = t
                t = max(t + rng.randint(2_000, 5_000), gpu_end + rng.randint(1_000, 9_000))
                corr[0] += 1
                x('cudaStreamSynchronize', 'cuda_runtime', 1, 1, call, t, correlation=corr[0])
                x('Stream Sync', 'cuda_sync', 0, 7, call, t, stream=7, correlation=corr[0], device=0)
                blocked += t - max(call, gpu_end)
                t += rng.randint(1_000, 4_000)
                x('aten::_local_scalar_dense', 'cpu_op', 1, 1, op_start, t)
                continue
            for _ in range(rng.randint(0, 3)):
                t += rng.randint(1_000, 30_000)
                launch = t
                t += rng.randint(5_000, 12_000)
                corr[0] += 1
                x('cudaLaunchKernel', 'cuda_runtime', 1, 1, launch, t, correlation=corr[0])
                # On an idle stream the kernel starts before the next launch call does.
                k = launch + rng.randint(2_000, 4_900) if gpu_end < launch else gpu_end + rng.randint(1_000, 6_000)
                gpu_end = k + rng.choice([rng.randint(1_000, 20_000), rng.randint(40_000, 400_000)])
                x(f'kernel_{corr[0]}', 'kernel', 0, 7, k, gpu_end, stream=7, correlation=corr[0], device=0)
            t += rng.randint(1_000, 40_000)
            x(rng.choice(['aten::mm', 'aten::add', 'aten::relu']), 'cpu_op', 1, 1, op_start, t)
        # The step ends in a synchronization, so that no work runs on into the next.
        op_start = t
        t += 2_000
        corr[0] += 1
        call = t
        t = max(t + 3_000, gpu_end + rng.randint(1_000, 9_000))
        x('cudaDeviceSynchronize', 'cuda_runtime', 1, 1, call, t, correlation=corr[0])
        x('Context Sync', 'cuda_sync', 0, 7, call, t, stream=7, correlation=corr[0], device=0)
        blocked += t - max(call, gpu_end)
        t += 1_000
        x('aten::synchronize', 'cpu_op', 1, 1, op_start, t)
        x(f'ProfilerStep#{step}', 'user_annotation', 1, 1, start, t)
        adjust.append(blocked)
        t += 1_000  # HTA's window holds the events that start at its end: the next step's start after it
    return {'traceEvents': ev, 'deviceProperties': [{'id': 0, 'name': 'synthetic'}]}, adjust


def analyze(binary, path):
    r = subprocess.run([binary, 'analyze', '--quiet', '--format', 'json', path], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f'analyze exit {r.returncode}: {r.stderr.strip()[:200]}')
    return json.loads(r.stdout)


def per_step(binary, path):
    """[(step name, step ns, ours {bound: ns}, HTA length, HTA {bound: ns}, HTA path)]."""
    j = analyze(binary, path)
    evs = hta.events_of(read_events(path), ns)
    out = []
    for s, p in zip(j['steps'], j['critical_path']):
        start = ns(s['start_us'])
        length, by, path_edges = hta.critical_path(evs, start, start + ns(s['total_us']))
        out.append((s['name'], ns(s['total_us']), {k: ns(v) for k, v in p['bound_by'].items()}, length, by, path_edges))
    return out


def show(by):
    return ' '.join(f'{k}={v / 1000:.1f}' for k, v in by.items() if v)  # microseconds


def synthetic(c, binary, seeds):
    problems = []
    analysed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            doc, adjust = make_trace(seed)
            path = os.path.join(tmp, f'{seed}.json')
            with open(path, 'w') as f:
                json.dump(doc, f)
            steps = per_step(binary, path)
            # The last steps may be left out as cut off (a step launching under four fifths of
            # the work of the one before); the others are analysed in order.
            if not 0 < len(steps) <= len(adjust):
                problems.append(f'seed {seed}: {len(steps)} steps, made {len(adjust)}')
                continue
            analysed += len(steps)
            for (name, total, ours, _, theirs, _), blocked in zip(steps, adjust):
                want = dict(theirs)
                want['cpu_bound'] += blocked
                if ours != want:
                    problems.append(f'seed {seed} {name}: ours {show(ours)}; HTA + {blocked} ns blocked {show(want)}')
                if sum(ours.values()) != total:
                    problems.append(f'seed {seed} {name}: parts {sum(ours.values())} != step {total}')
    c.report(f'{seeds} random traces ({analysed} steps): each step\'s path as HTA\'s, category by category, plus the '
             'blocking calls\' own time', problems)


def real(c, binary, shared):
    def trace(name):
        for d in (shared, os.path.join(shared, 'torch211')):
            for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                if f.startswith(name) and '.json' in f and 'key_averages' not in f:
                    return os.path.join(d, f)
        return None

    # A GPU-bound step: the middle steps of the V100 trace, whose windows both tools draw alike.
    v100 = trace('hta__ns_resolution_trace')
    if v100:
        problems = []
        steps = per_step(binary, v100)
        for name, total, ours, length, theirs, _ in steps[1:-1]:
            for k in hta.BOUNDS:
                if abs(ours[k] - theirs[k]) > total // 100:
                    problems.append(f'{name} {k}: ours {ours[k]}, HTA {theirs[k]} (step {total})')
            print(f'     {name}: ours {show(ours)}; HTA {show(theirs)} (us)')
        c.report(f'V100 GPU-bound steps: every category as HTA\'s within 1% of the step ({len(steps) - 2} steps)',
                 problems)
    # CUDA graphs: the replayed kernels agree exactly; HTA has no launch edge for
    # cudaGraphLaunch (not among its launch calls), so the host before the graph is on no path.
    graph = trace('cudagraph')
    if graph:
        problems = []
        for name, total, ours, length, theirs, _ in per_step(binary, graph):
            print(f'     {name}: ours {show(ours)}; HTA {show(theirs)} (us)')
            for k in ('gpu_compute_bound', 'gpu_kernel_kernel_overhead'):
                if ours[k] != theirs[k]:
                    problems.append(f'{name} {k}: ours {ours[k]}, HTA {theirs[k]}')
            if theirs['cpu_bound'] or theirs['gpu_kernel_launch_overhead'] or not ours['cpu_bound']:
                problems.append(f'{name}: host time ours {ours["cpu_bound"]}, HTA {theirs["cpu_bound"]}')
        c.report('cudagraph: the graph\'s kernels and gaps as HTA\'s to the ns; the host before it only ours', problems)
    lm = trace('lm_train')
    if lm:
        problems = []
        for name, total, ours, length, theirs, _ in per_step(binary, lm):
            print(f'     {name} ({total / 1e6:.1f} ms): ours {show(ours)}; HTA {length / 1e6:.1f} ms: {show(theirs)} (us)')
            if max(ours, key=ours.get) != 'cpu_bound' or max(theirs, key=theirs.get) != 'cpu_bound':
                problems.append(f'{name}: not both CPU-bound')
            if not length < total:
                problems.append(f'{name}: HTA\'s path {length} not shorter than the step {total}')
        c.report('lm_train: both CPU-bound; HTA\'s path shorter than the step by the time it weighs 0', problems)
    ms = trace('multistream')
    if ms:
        problems = []
        for name, total, ours, length, theirs, edges in per_step(binary, ms):
            memcpy = sum(w for a, b, kind, w in edges if a.name == b.name == 'cudaMemcpyAsync')
            print(f'     {name}: HTA {memcpy / 1e6:.1f} ms of cudaMemcpyAsync as cpu_bound; '
                  f'ours {ours["gpu_compute_bound"] / 1e6:.1f} ms gpu_compute_bound')
            if not (memcpy > total // 2 and theirs['cpu_bound'] >= memcpy):
                problems.append(f'{name}: HTA\'s path holds {memcpy} ns of the copy call')
            if not ours['gpu_compute_bound'] > total // 2:
                problems.append(f'{name}: ours {show(ours)}')
        c.report('multistream: the wait in a synchronous copy is the device\'s copy (HTA: the CPU\'s call)', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--seeds', type=int, default=40)
    ap.add_argument('--no-shared', action='store_true')
    a = ap.parse_args()
    c = Tally()
    synthetic(c, a.binary, a.seeds)
    shared = os.path.join(os.path.dirname(os.path.abspath(a.testdata)), '..', 'shared', 'traces')
    real(c, a.binary, os.path.join(a.testdata, 'real') if a.no_shared or not os.path.isdir(shared) else shared)
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
