#!/usr/bin/env python3
"""Records the real traces and memory snapshots this project tests against.

Runs on a machine with one CUDA GPU and torch 2.x (not in CI): the outputs are
committed as test data, and this script says how they were made. Everything
lands in OUTDIR:
  ddp_gloo_4ranks_late2_rank{0..3}.pt.trace.json.gz  four DDP ranks over gloo
      on one GPU; rank 2 sleeps LATE_MS before each forward, so the others
      wait for it inside their all-reduces (the straggler synchronous training
      hides); NAME.key_averages.json beside each.
  decode_loop.pt.trace.json.gz  greedy decoding with a small fp32 model,
      batch 1, `.item()` per token: launch-bound, synchronising, no Tensor
      Cores.
  oom_train.pickle.gz  a memory snapshot (stacks="all") of a training loop
      whose batch doubles until the allocator runs out of memory under a
      per-process limit; the `oom` entry is in the ring.
  ring_overflow.pickle.gz  the same loop with a ring of 500 entries, so
      the ring overflows.
  ddp_gloo_4ranks_uneven1_rank{0..3}.pt.trace.json.gz  the DDP set with
      rank 1 on twice the batch (an uneven shard), nobody sleeping.
  expandable.pickle.gz  training steps with expandable segments.
  long_train.pickle.gz  150 steps of a GPT-like model (8 layers, width 512,
      bf16 autocast, AdamW) with every alloc and free recorded (stacks="all",
      context="all"), dumped with _dump_snapshot: 357,568 ring entries, the
      shape of the large snapshots users bring (a fresh frames list per entry).
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

LATE_RANK = 2
LATE_MS = 30
WORLD = 4


def profiler(on_ready):
    act = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    return torch.profiler.profile(
        activities=act,
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
        with_modules=True,
        with_flops=True,
        on_trace_ready=on_ready,
    )


def key_averages(prof, path):
    rows = []
    for e in prof.key_averages():
        rows.append({
            "name": e.key,
            "count": e.count,
            "self_cpu_us": e.self_cpu_time_total,
            "cpu_total_us": e.cpu_time_total,
            "self_device_us": getattr(e, "self_device_time_total", 0.0),
            "device_total_us": getattr(e, "device_time_total", 0.0),
            "cpu_memory_usage": e.cpu_memory_usage,
            "device_memory_usage": getattr(e, "device_memory_usage", 0),
            "flops": e.flops,
        })
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(self.act(self.up(self.norm(x))))


class Net(nn.Module):
    def __init__(self, width=512, layers=4, vocab=1000):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(layers)])
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)))


def ddp_rank(rank, outdir, port, uneven=False):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = nn.parallel.DistributedDataParallel(Net().to(dev))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    name = f"ddp_gloo_{WORLD}ranks_late{LATE_RANK}_rank{rank}"
    if uneven:
        name = f"ddp_gloo_{WORLD}ranks_uneven1_rank{rank}"

    def ready(prof):
        prof.export_chrome_trace(os.path.join(outdir, name + ".pt.trace.json.gz"))
        key_averages(prof, os.path.join(outdir, name + ".key_averages.json"))

    # uneven: rank 1 gets twice the batch (an uneven shard), nobody sleeps.
    tokens = torch.randint(0, 1000, (32 if uneven and rank == 1 else 16, 128), device=dev)
    with profiler(ready) as prof:
        for _ in range(5):
            if rank == LATE_RANK and not uneven:
                time.sleep(LATE_MS / 1000.0)
            out = model(tokens)
            loss = loss_fn(out.view(-1, out.shape[-1]), tokens.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def decode_loop(outdir):
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = Net(width=256, layers=6).to(dev).eval()

    def ready(prof):
        prof.export_chrome_trace(os.path.join(outdir, "decode_loop.pt.trace.json.gz"))
        key_averages(prof, os.path.join(outdir, "decode_loop.key_averages.json"))

    with torch.no_grad(), profiler(ready) as prof:
        for _ in range(5):
            seq = [1]
            for _ in range(24):
                t = torch.tensor([seq[-32:]], device=dev)
                nxt = model(t)[0, -1].argmax().item()
                seq.append(int(nxt))
            prof.step()


def train_until_oom(path, max_entries):
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    torch.cuda.set_per_process_memory_fraction(
        min(1.0, 3 * 2**30 / torch.cuda.get_device_properties(0).total_memory))
    torch.cuda.memory._record_memory_history(max_entries=max_entries, stacks="all")
    model = Net(width=768, layers=4, vocab=8000).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    batch = 4
    try:
        while True:
            with torch.profiler.record_function(f"train_step_batch_{batch}"):
                tokens = torch.randint(0, 8000, (batch, 256), device=dev)
                out = model(tokens)
                loss = loss_fn(out.view(-1, out.shape[-1]), tokens.view(-1))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                del out, loss
            batch *= 2
    except torch.OutOfMemoryError as e:
        print(f"{path}: OOM at batch {batch}: {str(e).splitlines()[0][:160]}", flush=True)
    snap = torch.cuda.memory._snapshot()
    with gzip.open(path, "wb") as f:
        import pickle
        pickle.dump(snap, f)
    torch.cuda.memory._record_memory_history(enabled=None)


def expandable_child(path):
    torch.manual_seed(0)
    torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
    model = Net(width=512, layers=3, vocab=4000).cuda()
    opt = torch.optim.Adam(model.parameters())
    for batch in (4, 8, 16):
        with torch.profiler.record_function(f"train_step_batch_{batch}"):
            tokens = torch.randint(0, 4000, (batch, 256), device="cuda")
            loss = model(tokens).float().logsumexp(-1).mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    snap = torch.cuda.memory._snapshot()
    import pickle
    with gzip.open(path, "wb") as f:
        pickle.dump(snap, f)


def expandable(outdir):
    # A fresh process: the allocator reads PYTORCH_CUDA_ALLOC_CONF at CUDA init.
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    subprocess.run([sys.executable, os.path.abspath(__file__), outdir, "--only", "expandable-child"],
                   env=env, check=True)


class GPTBlock(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.attn = nn.MultiheadAttention(c, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab=8192, c=512, layers=8, heads=8, context=256):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, c), nn.Embedding(context, c)
        self.blocks = nn.ModuleList(GPTBlock(c, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(c), nn.Linear(c, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        n = idx.shape[1]
        mask = torch.triu(torch.ones(n, n, device=idx.device, dtype=torch.bool), 1)
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln(x))


def long_train(path, steps=150):
    torch.manual_seed(0)
    model = GPT().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    torch.cuda.memory._record_memory_history(max_entries=1_000_000, context="all", stacks="all")
    with torch.profiler.record_function("train"):
        for _ in range(steps):
            idx = torch.randint(0, 8192, (16, 256), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = nn.functional.cross_entropy(model(idx).flatten(0, 1), idx.flatten())
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    raw = path[:-len(".gz")]
    torch.cuda.memory._dump_snapshot(raw)
    torch.cuda.memory._record_memory_history(enabled=None)
    with open(raw, "rb") as f, gzip.open(path, "wb", compresslevel=9) as g:
        g.write(f.read())
    os.remove(raw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--only", default="ddp,uneven,decode,oom,overflow,expandable,long")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    only = set(args.only.split(","))
    print(torch.__version__, torch.cuda.get_device_name(0), flush=True)
    steps = [
        ("ddp", lambda: mp.spawn(ddp_rank, args=(args.outdir, 29531), nprocs=WORLD, join=True)),
        ("uneven", lambda: mp.spawn(ddp_rank, args=(args.outdir, 29532, True), nprocs=WORLD, join=True)),
        ("decode", lambda: decode_loop(args.outdir)),
        ("oom", lambda: train_until_oom(os.path.join(args.outdir, "oom_train.pickle.gz"), 200000)),
        ("overflow", lambda: train_until_oom(os.path.join(args.outdir, "ring_overflow.pickle.gz"), 500)),
        ("expandable", lambda: expandable(args.outdir)),
        ("expandable-child", lambda: expandable_child(os.path.join(args.outdir, "expandable.pickle.gz"))),
        ("long", lambda: long_train(os.path.join(args.outdir, "long_train.pickle.gz"))),
    ]
    for key, fn in steps:
        if key not in only:
            continue
        t0 = time.time()
        try:
            fn()
            print(f"{key}: ok in {time.time() - t0:.1f}s", flush=True)
        except Exception as e:  # one failing recording must not lose the others
            print(f"{key}: FAILED: {type(e).__name__}: {e}", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
