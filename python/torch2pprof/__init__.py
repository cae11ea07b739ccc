"""torch2pprof from Python: PyTorch profiler traces and CUDA memory snapshots to pprof
profiles and reports, in this process (analyze, convert, compare, summarize), and a
torch.profiler on_trace_ready handler that writes them beside the training job.

Importing this package never imports torch; only the handler needs it.
"""

from ._api import Comparison, Error, Report, analyze, compare, convert, run, summarize, __version__
from ._handler import TraceHandler, on_trace_ready

__all__ = [
    "Comparison",
    "Error",
    "Report",
    "TraceHandler",
    "analyze",
    "compare",
    "convert",
    "on_trace_ready",
    "run",
    "summarize",
    "__version__",
]
