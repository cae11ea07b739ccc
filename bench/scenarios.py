#!/usr/bin/env python3
"""The diagnosis benchmark's workloads: small CPU training and inference loops, each with
one known cause of slowness, and its fixed twin (the same loop with the remedy applied).
Run by bench/diagnose.py, one process per run, with the interpreter that has torch.

usage: scenarios.py OUTDIR NAME cause|twin
Writes OUTDIR/NAME.VARIANT.pt.trace.json.gz (torch's export, from on_trace_ready) and
OUTDIR/NAME.VARIANT.steps.json: each profiled step's wall time by this script's own clock
(time.perf_counter around the step's code, up to its prof.step()), the measured side of the
benchmark.
SCENARIOS below is the manifest: each scenario's cause, the finding analyze should put
first, words its text should hold, and the findings its twin must not be given (their
remedy is already applied there).
"""
import json
import os
import sys
import threading
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.data import DataLoader, Dataset

STEPS = 12  # profiled steps; the median of the last ACTIVE is the step time
WARMUP = 2

SCENARIOS = {
    'sleep': dict(
        cause='a slow logger: time.sleep(8 ms) in every step',
        finding='sleep', words=['sleep', 'scenarios.py'], twin='the logger without the sleep',
        already=['sleep']),
    'straggler': dict(
        cause='rank 2 of 4 gloo ranks sleeps 40 ms before its forward; the others wait in the all-reduce',
        finding='straggler', words=['Rank 2'], twin='no rank sleeps', ranks=4, already=[]),
    'dataloader': dict(
        cause='a DataLoader with num_workers=0 whose __getitem__ takes 0.4 ms a sample (6.4 ms a batch)',
        finding='dataloader', words=['DataLoader', 'num_workers'], twin='num_workers=2', already=[]),
    'tiny_ops': dict(
        cause='400 tiny operators in a Python loop (a per-row accumulation)',
        finding='host_bound', words=['aten::add'], twin='one batched operator (sum over the rows)', already=[]),
    'foreach_optimizer': dict(
        cause='AdamW with foreach=True over 120 small parameters',
        finding='fused_optimizer', words=['fused=True'], twin='AdamW(fused=True)', already=['fused_optimizer']),
    'thread_join': dict(
        cause='the step joins two threads that compute after its forward',
        finding='thread_wait', words=['waits for other threads', 'threading.py'],
        twin='the threads\' work made half as long',
        explain_only=True, already=[]),
    'lock': dict(
        cause='a background thread sleeps 6 ms of every 10 holding a lock the step needs',
        finding='sleep', words=['lock'], twin='the background thread sleeps without the lock', mean=True,
        already=['sleep']),
    'compile_warmup': dict(
        cause='torch.compile\'s first call (compiling) inside the profiled steps',
        finding='warmup', words=['warm'], twin='compiled and warmed up before profiling', mean=True,
        already=['warmup']),
    'fsdp_one_rank': dict(
        cause='FSDP (fully_shard per layer) with one rank: all-gathers and reduce-scatters that shard nothing',
        finding='fsdp_single_rank', words=['one rank', 'FSDP'], twin='the same model without FSDP',
        already=['fsdp_single_rank']),
    'control_train': dict(cause=None, finding=None, words=[], twin=None, already=[]),
    'control_infer': dict(cause=None, finding=None, words=[], twin=None, already=[]),
}


class Mlp(nn.Module):
    def __init__(self, width=256, depth=4, out=8):
        super().__init__()
        self.body = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(depth)])
        self.head = nn.Linear(width, out)

    def forward(self, x):
        return self.head(self.body(x))


class Samples(Dataset):
    def __init__(self, n, width, delay_s):
        self.n, self.width, self.delay_s = n, width, delay_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay_s:
            time.sleep(self.delay_s)  # decoding, augmentation: time on the loading thread
        g = torch.Generator().manual_seed(i)
        return torch.randn(self.width, generator=g), torch.randint(0, 8, (), generator=g)


def run(out, name, variant, step_fn, with_stack=True):
    """Profiles STEPS steps of step_fn(i); writes the trace and step times."""
    times, last = [], [None]
    path = os.path.join(out, f'{name}.{variant}.pt.trace.json.gz')

    def ready(prof):
        prof.export_chrome_trace(path)

    with profile(activities=[ProfilerActivity.CPU], with_stack=with_stack, record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=STEPS), on_trace_ready=ready) as prof:
        for i in range(STEPS + 1):
            t0 = time.perf_counter()
            step_fn(i)
            if i >= 1:  # the profiler's warm-up step is not recorded
                times.append(time.perf_counter() - t0)
            prof.step()  # the last one exports the trace: not the step's time
    with open(os.path.join(out, f'{name}.{variant}.steps.json'), 'w') as f:
        json.dump({'step_s': times, 'warmup': WARMUP}, f)


def train_step(model, opt, x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def sleep(out, variant):
    model, x, y = Mlp(), torch.randn(64, 256), torch.randint(0, 8, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, fused=True)  # one cause a scenario: the step fused

    def log_metrics(loss):
        if variant == 'cause':
            time.sleep(0.008)  # a slow logger: a blocking write, a metrics server
        return float(loss)

    run(out, 'sleep', variant, lambda i: log_metrics(train_step(model, opt, x, y)))


def dataloader(out, variant):
    model = Mlp()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, fused=True)  # one cause a scenario: the step fused
    loader = DataLoader(Samples(16 * 64, 256, 0.0004), batch_size=16,
                        num_workers=0 if variant == 'cause' else 2, persistent_workers=variant == 'twin')
    it = iter(loader)
    extra = torch.randn(512, 512)

    def step(i):
        x, y = next(it)
        train_step(model, opt, x, y)
        for _ in range(8):  # more compute than two workers need to keep up
            torch.mm(extra, extra)

    for _ in range(3):  # the workers started and their queue filled before profiling
        next(it)
    run(out, 'dataloader', variant, step)


def tiny_ops(out, variant):
    model, x, y = Mlp(), torch.randn(64, 256), torch.randint(0, 8, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, fused=True)  # one cause a scenario: the step fused
    rows = torch.randn(400, 16)

    def step(i):
        train_step(model, opt, x, y)
        if variant == 'cause':
            acc = torch.zeros(16)
            for r in range(rows.shape[0]):  # one add per row: 400 operators
                acc = acc + rows[r]
        else:
            acc = rows.sum(0)
        return acc

    run(out, 'tiny_ops', variant, step)


def foreach_optimizer(out, variant):
    model = nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.ReLU()) for _ in range(60)])
    x, y = torch.randn(16, 32), torch.randn(16, 32)
    if variant == 'cause':
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step(i):
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    run(out, 'foreach_optimizer', variant, step)


def thread_join(out, variant):
    model, x, y = Mlp(), torch.randn(64, 256), torch.randint(0, 8, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, fused=True)  # one cause a scenario: the step fused
    a = torch.randn(256, 256)
    rounds = 24 if variant == 'cause' else 12

    def side_work():
        b = a
        for _ in range(rounds):
            b = torch.tanh(b @ a / 256)

    def step(i):
        loss = nn.functional.cross_entropy(model(x), y)
        threads = [threading.Thread(target=side_work) for _ in range(2)]
        for t in threads:
            t.start()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        for t in threads:
            t.join()

    run(out, 'thread_join', variant, step)


def lock(out, variant):
    model, x, y = Mlp(), torch.randn(64, 256), torch.randint(0, 8, (64,))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, fused=True)  # one cause a scenario: the step fused
    shared, stop = threading.Lock(), threading.Event()

    # Explicit acquire(): a `with lock:` block calls __enter__ as no traced function, so
    # its wait is the caller's own time in the trace (docs/reference.md).
    def background():
        while not stop.is_set():
            if variant == 'cause':
                shared.acquire()  # holds the step's lock while it sleeps: 6 ms of every 10
                time.sleep(0.006)
                shared.release()
            else:
                time.sleep(0.006)
            time.sleep(0.004)

    t = threading.Thread(target=background, daemon=True)
    t.start()

    def step(i):
        shared.acquire()
        train_step(model, opt, x, y)
        shared.release()

    run(out, 'lock', variant, step)
    stop.set()
    t.join()


def compile_warmup(out, variant):
    model = torch.compile(Mlp(width=64, depth=2))
    x = torch.randn(16, 64)
    if variant == 'twin':
        for _ in range(3):
            model(x)

    def step(i):
        if i == 0 and variant == 'cause':
            return  # the profiler's warm-up step: the first call comes in the first recorded step
        with torch.no_grad():
            model(x)

    # Without with_stack: Python's tracer makes a cold compile's trace half a gigabyte
    # (Dynamo's own timed events mark the compile either way).
    run(out, 'compile_warmup', variant, step, with_stack=False)


def fsdp_one_rank(out, variant):
    import socket

    import torch.distributed as dist
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=0, world_size=1)
    model, x, y = Mlp(), torch.randn(64, 256), torch.randint(0, 8, (64,))
    if variant == 'cause':
        from torch.distributed.fsdp import fully_shard
        for layer in model.body:
            fully_shard(layer)
        fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    run(out, 'fsdp_one_rank', variant, lambda i: train_step(model, opt, x, y))
    dist.destroy_process_group()


def control_train(out, variant):
    model, x, y = Mlp(width=512), torch.randn(128, 512), torch.randint(0, 8, (128,))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    run(out, 'control_train', variant, lambda i: train_step(model, opt, x, y))


def control_infer(out, variant):
    model, x = Mlp(width=512, depth=6).eval(), torch.randn(256, 512)

    def step(i):
        with torch.inference_mode():
            model(x)

    run(out, 'control_infer', variant, step)


def straggler_rank(rank, world, port, out, variant):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group('gloo', rank=rank, world_size=world)
    torch.manual_seed(0)
    model = DistributedDataParallel(Mlp(width=128, depth=2))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, fused=True)  # one cause a scenario: the step fused
    x, y = torch.randn(32, 128), torch.randint(0, 8, (32,))

    def step(i):
        if variant == 'cause' and rank == 2:
            time.sleep(0.040)  # the straggler: slow input, a slow disk, a busy host
        train_step(model, opt, x, y)

    run(out, f'straggler.rank{rank}', variant, step)
    dist.destroy_process_group()


def straggler(out, variant):
    import socket

    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    mp.spawn(straggler_rank, args=(4, port, out, variant), nprocs=4, join=True)


def main():
    out, name, variant = sys.argv[1:4]
    assert name in SCENARIOS and variant in ('cause', 'twin'), sys.argv
    torch.manual_seed(0)
    if name != 'straggler':
        torch.set_num_threads(1)  # one core for the step: two runs of one loop stay comparable
    globals()[name](out, variant)


if __name__ == '__main__':
    main()
