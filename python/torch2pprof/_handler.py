"""on_trace_ready: the torch.profiler handler. On the training thread it only writes
torch's plain .json export (the fastest it has); a worker process at the lowest
priority, on one core, then writes the rank summary, the pprof profile, the report and
the .json.gz. Nothing it does raises into training: failures are logged once a kind."""

import atexit
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import weakref
from collections import deque
from typing import Callable, Dict, List, Optional

from ._api import binary

_log = logging.getLogger("torch2pprof")
# This process's handlers, for settle(): the API waits for their outputs before it reads
# them (analyze("prof/") right after the profiler's loop).
_handlers: "weakref.WeakSet[TraceHandler]" = weakref.WeakSet()
# The report formats on_trace_ready takes, and the suffix of each.
REPORT_FORMATS = {"html": ".html", "json": ".report.json", "text": ".txt"}


def settle(words: List[str]) -> None:
    """Waits for the handlers whose folder holds one of words."""
    paths = [os.path.abspath(w) for w in words if w and not w.startswith("-")]
    for handler in list(_handlers):
        if any(p == handler.dir or p.startswith(handler.dir + os.sep) for p in paths):
            handler.wait()


def _rank_name() -> str:
    """The rank as the trace's distributedInfo has it, else RANK / LOCAL_RANK, else the pid."""
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return f"rank{dist.get_rank()}"
    except Exception:  # torch absent or broken: the environment decides
        pass
    for var in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(var, "")
        if value.isdigit():
            return f"rank{value}"
    return f"pid{os.getpid()}"


def _complete(prof) -> bool:
    """Whether the cycle ended as its schedule says (step() left its last active step)
    rather than cut short by the profiler's stop: analyze on the folder prefers those."""
    try:
        from torch.profiler import ProfilerAction
        from torch.profiler.profiler import _default_schedule_fn

        schedule = getattr(prof, "schedule", None)
        if schedule is None or schedule is _default_schedule_fn:
            return True  # no schedule: the whole run is the cycle
        return schedule(prof.step_num - 1) == ProfilerAction.RECORD_AND_SAVE
    except Exception:
        return True


class TraceHandler:
    """A profiler's on_trace_ready (see on_trace_ready). `traces` lists the traces in
    the order written, as they will be named once the worker is done (.json.gz with
    gzip); wait() blocks until then (the API's functions wait by themselves)."""

    def __init__(self, dir, *, summary=True, pprof=True, gzip=True, report=None, then=None):
        if report is not None and report not in REPORT_FORMATS:
            raise ValueError(f"report must be None or one of {', '.join(REPORT_FORMATS)}, got {report!r}")
        if then is not None and not callable(then):
            raise TypeError("then must be a callable that takes the profiler")
        self.dir = os.path.abspath(os.fspath(dir))
        self.traces: List[str] = []
        self._outputs = {"summary": summary, "pprof": pprof, "gzip": gzip, "report": report}
        self._then: Optional[Callable] = then
        self._jobs: deque = deque()
        self._busy = False
        self._cv = threading.Condition()
        self._logged: Dict[str, bool] = {}
        self._running: Optional[int] = None  # the worker's pid
        _handlers.add(self)
        atexit.register(_hand_off, weakref.ref(self))

    def __call__(self, prof) -> None:
        try:
            self._cycle(prof)
        except Exception as e:  # never into training
            self._once("handler", f"torch2pprof: the profiler's trace was not handled: {e}")
        if self._then is not None:
            self._then(prof)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until every trace handed over so far has its outputs (or failed, which is
        logged); False if timeout seconds passed first."""
        with self._cv:
            return self._cv.wait_for(lambda: not self._jobs and not self._busy, timeout)

    def _once(self, kind: str, message: str) -> None:
        if not self._logged.get(kind):
            self._logged[kind] = True
            _log.warning("%s (further such failures are not logged)", message)

    def _cycle(self, prof) -> None:
        # N: the cycle's last step, as its ProfilerStep#N (step() has moved past it; the
        # profiler's stop has not).
        complete = _complete(prof)
        name = f"{_rank_name()}.step{max(prof.step_num - 1, 0) if complete else prof.step_num}"
        name += "" if complete else ".partial"
        stem = os.path.join(self.dir, name)
        trace = stem + ".pt.trace.json"
        try:
            os.makedirs(self.dir, exist_ok=True)
            prof.export_chrome_trace(trace)
        except Exception as e:
            try:
                os.remove(trace)  # a partial export (a full disk) is no trace
            except OSError:
                pass
            self._once("export", f"torch2pprof: cannot write the trace {trace}: {e}")
            return
        self.traces.append(trace + ".gz" if self._outputs["gzip"] else trace)
        job = dict(self._outputs, trace=trace, stem=stem, binary=binary())
        with self._cv:
            self._jobs.append(job)
            if not self._busy:
                self._busy = True
                threading.Thread(target=self._drain, name="torch2pprof-handler", daemon=True).start()

    def _drain(self) -> None:
        """Runs the queued cycles one worker at a time (at most one core in all)."""
        while True:
            with self._cv:
                if not self._jobs:
                    self._busy = False
                    self._cv.notify_all()
                    return
                job = self._jobs.popleft()
            try:
                self._work([job])
            except Exception as e:
                self._once("worker", f"torch2pprof: the worker could not start: {e}")

    def _work(self, jobs: List[dict]) -> None:
        with tempfile.TemporaryFile() as err:
            process = _spawn(jobs, err)
            self._running = process.pid
            process.wait()
            self._running = None
            err.seek(0)
            text = err.read().decode(errors="replace").strip()
        if process.returncode < 0:
            self._once("killed", f"torch2pprof: the worker for {jobs[0]['trace']} died of signal {-process.returncode}")
        elif process.returncode != 0:
            # The worker's lines are "KIND\tmessage": one log line per kind.
            for line in text.splitlines() or [f"worker\ttorch2pprof: the worker failed: exit status {process.returncode}"]:
                kind, _, message = line.partition("\t")
                self._once(kind, message or kind)

    def _hand_off(self) -> None:
        """At exit: the queue's remaining cycles to one detached worker that first waits for
        the running one, so that training's end never waits for the outputs."""
        with self._cv:
            pending = list(self._jobs)  # the running one has left the queue
            self._jobs.clear()
        if pending:
            try:
                _spawn(pending, None, after=self._running)
            except Exception as e:
                self._once("worker", f"torch2pprof: the worker could not start: {e}")


def _hand_off(ref) -> None:
    handler = ref()
    if handler is not None:
        handler._hand_off()


def _spawn(jobs: List[dict], err, after: Optional[int] = None) -> subprocess.Popen:
    """The worker, a process of its own session (a ^C to the job does not kill it
    mid-write) that finds this very package."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = package_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.Popen(
        [sys.executable, "-m", "torch2pprof._worker", json.dumps({"jobs": jobs, "after": after})],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=err if err is not None else subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env=env,
    )


def on_trace_ready(dir, *, summary=True, pprof=True, gzip=True, report=None, then=None) -> TraceHandler:
    """A torch.profiler on_trace_ready handler that writes each cycle into dir as
    RANK.stepN.pt.trace.json (RANK: rank3 by torch.distributed, RANK or LOCAL_RANK, else
    pid1234; N the cycle's last step, ProfilerStep#N; .stepN.partial for a cycle the
    profiler's stop cut short), then, from a worker process at the lowest priority
    and on one core: RANK.stepN.summary.json (summary), .pb.gz (pprof), the report
    (report="html", "json" or "text") and the trace gzipped in place (gzip). then: a
    handler to call after this one (the one a framework had)."""
    return TraceHandler(dir, summary=summary, pprof=pprof, gzip=gzip, report=report, then=then)
