#!/usr/bin/env python3
"""How long torch2pprof.on_trace_ready blocks the training loop, against torch's own
exports of the same profile: export_chrome_trace("x.json") (the plain dump, the fastest
torch has) and export_chrome_trace("x.json.gz") (torch gzips at level 9 in Python, on
the training thread); and how long after the handler returns its worker's outputs (the
summary, the pprof, the HTML report when asked, the .json.gz) are all written.

Real torch (2.13, CPU): a loop of small operators under the profiler with shapes and
stacks until the trace passes --mb of JSON, recorded afresh for each export (torch saves
a profile once); the three in alternating order, --runs times each. Run it with a Python that has torch and
the installed wheel (scripts/build-wheel.sh; pip install build/wheelhouse/*.whl):
  .venv/bin/python bench/handler.py --mb 150 --runs 3
"""
import argparse
import gc
import os
import shutil
import statistics
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile

import torch2pprof


def record(mb):
    """A profile whose JSON is at least mb MiB: steps of small operators with shapes and stacks."""
    x = torch.randn(64, 64)
    w = [torch.randn(64, 64) for _ in range(8)]
    ops_per_step = 400
    steps = max(1, int(mb * 2**20 / (ops_per_step * 1500)))  # about 1.5 kB of JSON an operator, measured
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True) as prof:
        for _ in range(steps):
            y = x
            for i in range(ops_per_step // 4):
                y = torch.relu(y @ w[i % 8] + 1.0) * 0.5
            prof.step()
    return prof


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=150, help="the trace's JSON size at least (MiB)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--report", default=None, help="also the report: html, json or text")
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="t2p-handler-bench-")
    times = {"plain": [], "gzip": [], "handler": [], "outputs": []}
    size = 0
    try:
        for run in range(args.runs):
            for kind in ("plain", "gzip", "handler") if run % 2 == 0 else ("handler", "gzip", "plain"):
                out = os.path.join(scratch, f"{kind}{run}")
                os.makedirs(out)
                prof = record(args.mb)
                if kind == "handler":
                    handler = torch2pprof.on_trace_ready(out, report=args.report)
                    t0 = time.perf_counter()
                    handler(prof)
                    t1 = time.perf_counter()
                    handler.wait()
                    t2 = time.perf_counter()
                    times["handler"].append(t1 - t0)
                    times["outputs"].append(t2 - t1)
                    written = sorted(os.listdir(out))
                    if not any(f.endswith(".json.gz") for f in written) or any(f.endswith(".pt.trace.json") for f in written):
                        raise SystemExit(f"the handler's outputs are not all there: {written}")
                else:
                    path = os.path.join(out, "x.json" + (".gz" if kind == "gzip" else ""))
                    t0 = time.perf_counter()
                    prof.export_chrome_trace(path)
                    times[kind].append(time.perf_counter() - t0)
                    if kind == "plain":
                        size = os.path.getsize(path)
                shutil.rmtree(out)
                del prof
                gc.collect()  # a profile of this size holds GBs until its cycles are collected
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"trace: {size / 2**20:.0f} MiB of JSON, torch {torch.__version__}, {os.cpu_count()} cores, {args.runs} runs each")
    print("| what blocks training | median s | runs |")
    print("|---|---|---|")
    for k, label in (("plain", 'export_chrome_trace("x.json")'), ("gzip", 'export_chrome_trace("x.json.gz")'),
                     ("handler", "torch2pprof.on_trace_ready(dir)")):
        print(f"| {label} | {med[k]:.3f} | {', '.join(f'{v:.3f}' for v in times[k])} |")
    print(f"\nhandler / plain export: {med['handler'] / med['plain']:.3f}x (goal <= 1.05x)")
    print(f"handler / gzip export:  {med['handler'] / med['gzip']:.3f}x (goal <= 0.333x)")
    print(f"outputs written {med['outputs']:.3f} s after the handler returned: "
          f"{med['outputs'] / med['plain']:.2f}x the plain export's time (goal <= 1x)")


if __name__ == "__main__":
    main()
