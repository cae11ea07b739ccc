"""Inputs shaped to cost more than their size, generated at any size n (tests/e2e/linear_e2e.py
checks each at n and 4n; bench/hostile.py times them). Each returns the bytes of a file.

Traces (Chrome trace JSON), each with ProfilerSteps so that the critical path is walked:
- deep:       one step holding a chain of n nested operators
- python_in_op: one operator holding n Python functions, each a launch with its External id
- threads:    n threads launching kernels, n steps whose main thread waits
- side_sync:  a synchronization on a side thread spanning n steps, a kernel in each
- nested_steps: n ProfilerStep windows, each inside the one before
- long_name:  one operator with a 1 MiB name spanning n steps
- steps_html: n steps, for the HTML's per-step lists
Memory snapshots (pickles):
- shared_file: n blocks whose frames share one 1 MiB file name through the pickle memo
- devices:    n devices with a segment each
Rank summaries (torch2pprof summarize's JSON):
- ranks_renumbered: n ranks whose step numbers all differ (each starts at its own iteration)
"""
import json
import math
import pickle


def _x(ev, name, cat, pid, tid, ts_ns, end_ns, **args):
    e = {'ph': 'X', 'cat': cat, 'name': name, 'pid': pid, 'tid': tid, 'ts': f'{ts_ns / 1000:.3f}',
         'dur': f'{(end_ns - ts_ns) / 1000:.3f}'}
    if args:
        e['args'] = args
    ev.append(e)


def _trace(ev):
    return json.dumps({'traceEvents': ev, 'deviceProperties': [{'id': 0, 'name': 'synthetic'}]}).encode()


def deep(n):
    ev = []
    _x(ev, 'ProfilerStep#1', 'user_annotation', 1, 1, 0, 4 * n + 100)
    for d in range(n):
        _x(ev, f'aten::op{d % 7}', 'cpu_op', 1, 1, 10 + d, 4 * n + 90 - d)
    return _trace(ev)


def python_in_op(n):
    """One operator holding n Python functions, each launching a kernel whose External id is
    the operator's (a compiled graph's launchers): each launch asked every child."""
    ev = []
    _x(ev, 'ProfilerStep#1', 'user_annotation', 1, 1, 0, 20 * n + 100)
    _x(ev, '## Call CompiledFxGraph g ##', 'cpu_op', 1, 1, 10, 20 * n + 90, **{'External id': 1})
    for k in range(n):
        at = 20 + 20 * k
        _x(ev, f'g.py({k}): launcher', 'python_function', 1, 1, at, at + 15)
        _x(ev, 'cuLaunchKernel', 'cuda_runtime', 1, 1, at + 2, at + 10, correlation=k + 1, **{'External id': 1})
        _x(ev, 'triton_k', 'kernel', 0, 7, at + 12, at + 14, stream=7, correlation=k + 1, device=0)
    return _trace(ev)


def threads(n):
    """n threads that each launch one kernel at the start, then n steps on the main thread,
    each an operator and a wait: every wait asked every launching thread whether it worked."""
    ev, corr, step = [], 0, 1000
    for th in range(n):
        corr += 1
        _x(ev, 'cudaLaunchKernel', 'cuda_runtime', 1, 100 + th, th, th + 1, correlation=corr)
        _x(ev, 'kernel', 'kernel', 0, 7, th + 2, th + 3, stream=7, correlation=corr, device=0)
    t0 = n + 100
    for s in range(n):
        at = t0 + s * step
        _x(ev, f'ProfilerStep#{s}', 'user_annotation', 1, 1, at, at + step - 10)
        _x(ev, 'aten::mm', 'cpu_op', 1, 1, at + 10, at + 100)
        _x(ev, 'aten::wait', 'cpu_op', 1, 1, at + 200, at + 900)
    return _trace(ev)


def side_sync(n):
    """n steps on the main thread, each launching a kernel; one synchronization on a side
    thread spans them all."""
    ev, step = [], 10_000
    # The side thread launches too, so that a walk visits it while the main thread idles.
    _x(ev, 'cudaLaunchKernel', 'cuda_runtime', 1, 2, 0, 5, correlation=10 ** 9 + 1)
    _x(ev, 'kernel', 'kernel', 0, 8, 6, 8, stream=8, correlation=10 ** 9 + 1, device=0)
    _x(ev, 'cudaDeviceSynchronize', 'cuda_runtime', 1, 2, 9, n * step + 100, correlation=10 ** 9)
    for s in range(n):
        t0 = 10 + s * step
        _x(ev, f'ProfilerStep#{s}', 'user_annotation', 1, 1, t0, t0 + step - 10)
        _x(ev, 'aten::mm', 'cpu_op', 1, 1, t0 + 10, t0 + 200)
        _x(ev, 'cudaLaunchKernel', 'cuda_runtime', 1, 1, t0 + 20, t0 + 100, correlation=s + 1)
        _x(ev, 'kernel', 'kernel', 0, 7, t0 + 120, t0 + 5000, stream=7, correlation=s + 1, device=0)
    return _trace(ev)


def nested_steps(n):
    ev = []
    for s in range(n):
        _x(ev, f'ProfilerStep#{s}', 'user_annotation', 1, 1, 10 * s, 20 * n - 10 * s)
        _x(ev, 'aten::add', 'cpu_op', 1, 1, 10 * s + 1, 10 * s + 5)
    return _trace(ev)


def long_name(n):
    """One operator on a second thread with a 1 MiB name, spanning n steps: the thread
    launches, so while the steps' own thread idles the path is in that operator."""
    ev, step = [], 1000
    _x(ev, 'x' * (1 << 20), 'cpu_op', 1, 2, 0, n * step + 10)
    _x(ev, 'cudaLaunchKernel', 'cuda_runtime', 1, 2, 1, 3, correlation=1)
    _x(ev, 'kernel', 'kernel', 0, 7, 4, 5, stream=7, correlation=1, device=0)
    for s in range(n):
        _x(ev, f'ProfilerStep#{s}', 'user_annotation', 1, 1, 5 + s * step, 5 + s * step + 20)
    return _trace(ev)


def steps_html(n):
    ev = []
    for s in range(n):
        _x(ev, f'ProfilerStep#{s}', 'user_annotation', 1, 1, 100 * s, 100 * s + 90)
        _x(ev, 'aten::add', 'cpu_op', 1, 1, 100 * s + 10, 100 * s + 50)
    return _trace(ev)


def shared_file(n):
    name = '/'.join(['d' * 255] * (1 << 12)) + '/train.py'  # 1 MiB
    frame = {'name': 'step', 'filename': name, 'line': 3}
    blocks = [{'address': i * 512, 'size': 512, 'requested_size': 512, 'state': 'active_allocated',
               'frames': [frame, {'name': f'fn{i}', 'filename': name, 'line': i}]} for i in range(n)]
    seg = {'device': 0, 'address': 0, 'total_size': 512 * n, 'stream': 0, 'segment_type': 'large', 'blocks': blocks}
    return pickle.dumps({'segments': [seg], 'device_traces': [[]]}, protocol=4)


def devices(n):
    return pickle.dumps({'segments': [{'device': d, 'address': d << 20, 'total_size': 1024, 'stream': 0,
                                       'segment_type': 'small',
                                       'blocks': [{'address': d << 20, 'size': 1024, 'requested_size': 1000,
                                                   'state': 'active_allocated', 'frames': []}]}
                                      for d in range(n)],
                         'device_traces': []}, protocol=4)


def ranks_renumbered(n, source):
    """n rank summaries made from `source` (a summary's JSON), each rank's steps numbered
    from its own iteration and its collective named its own: {file name: bytes}."""
    src = json.loads(source)
    out = {}
    for r in range(n):
        t = dict(src, rank=r, world_size=n)
        t['steps'] = [dict(st, name=f'ProfilerStep#{r * 10 + k}') for k, st in enumerate(src['steps'])]
        t['collectives'] = [dict(c, name=f'{c["name"]}_{r}') for c in src['collectives']]
        out[f'rank{r:05d}.summary.json'] = json.dumps(t).encode()
    return out
