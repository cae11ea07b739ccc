"""A real training loop under torch.profiler with torch2pprof.on_trace_ready, run by
wheel_e2e.py inside the venvs it makes. Modes:
  ranks OUT WORLD   WORLD gloo ranks of DistributedDataParallel, several schedule cycles
  fault OUT KIND    one process; KIND: binary (the CLI removed), readonly (a folder that
                    cannot be written), killed (the worker killed mid-work)
Prints one JSON line: what the loop saw (steps run, handler calls, log lines)."""
import json
import logging
import os
import sys
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

import torch2pprof


class Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def model():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8))


def loop(out, steps, then_calls, kill_worker=False):
    log = Capture()
    logging.getLogger("torch2pprof").addHandler(log)
    net = model()
    if torch.distributed.is_initialized():
        net = nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(net.parameters(), lr=1e-2)
    x, y = torch.randn(16, 64), torch.randint(0, 8, (16,))
    handler = torch2pprof.on_trace_ready(out, report="html", then=lambda p: then_calls.append(p.step_num))
    killed = None
    done = 0
    with profile(activities=[ProfilerActivity.CPU], with_stack=True, record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=2), on_trace_ready=handler) as prof:
        for _ in range(steps):
            nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            prof.step()
            done += 1
            if kill_worker and killed is None and handler.traces:
                # The first cycle's worker, killed as soon as it runs (it takes well over
                # 0.1 s: a Python start and three CLI runs).
                for _ in range(5000):
                    if handler._running:
                        killed = handler._running
                        os.kill(killed, 9)
                        break
                    time.sleep(0.001)
    finished = handler.wait(300)
    return {"steps": done, "then": then_calls, "traces": handler.traces, "log": log.lines,
            "finished": finished, "killed": killed}


def main():
    mode, out, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    torch.set_num_threads(1)
    if mode == "ranks":
        rank, world = int(os.environ["RANK"]), int(arg)
        torch.distributed.init_process_group("gloo", rank=rank, world_size=world)
        torch.manual_seed(0)
        result = loop(out, 10, [])
        torch.distributed.destroy_process_group()
    else:
        result = loop(out, 10, [], kill_worker=arg == "killed")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
