"""The commands as functions. Each builds the CLI's arguments and runs them in this
process through the extension module (the GIL released while it works), so a result is
the CLI's own bytes and an error is the CLI's own line and exit status."""

import json
import logging
import os
import tempfile
from typing import Iterable, List, NamedTuple, Optional, Sequence, Union

from . import _core

__version__ = _core.version

PathLike = Union[str, "os.PathLike[str]"]
_log = logging.getLogger("torch2pprof")
_PREFIX = "torch2pprof: "


class Error(Exception):
    """A command failed. `message` is the CLI's line without its "torch2pprof: " prefix,
    `status` the CLI's exit status: 1 bad input, 2 usage, 3 output not written."""

    def __init__(self, message: str, status: int, args: Sequence[str]):
        super().__init__(message)
        self.message = message
        self.status = status
        self.command = list(args)


class Run(NamedTuple):
    """What a command printed, as the CLI would have: `status`, `stdout` (bytes) and
    `stderr` (text: warnings, then the error's line)."""

    status: int
    stdout: bytes
    stderr: str


def binary() -> str:
    """The path of the CLI binary inside this package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "torch2pprof")


def run(*args: PathLike) -> Run:
    """Runs one CLI command in this process: run("analyze", "-top", "5", "t.json").
    Never raises for the command's own failure: the status says it."""
    from ._handler import settle

    words = [os.fspath(a) for a in args]
    settle(words)
    return Run(*_core.run(words))


def _call(args: List[str], ok: Iterable[int] = (0,)):
    """Runs args; raises Error unless the status is in ok; logs the warnings. Returns
    (standard output, warnings, status)."""
    result = run(*args)
    lines = [line[len(_PREFIX) :] if line.startswith(_PREFIX) else line for line in result.stderr.splitlines()]
    if result.status not in ok:
        raise Error(lines[-1] if lines else f"exit status {result.status}", result.status, args)
    for line in lines:
        _log.warning("%s", line)
    return result.stdout, lines, result.status


def _inputs(inputs) -> List[str]:
    if isinstance(inputs, (str, bytes, os.PathLike)):
        return [os.fspath(inputs)]
    return [os.fspath(i) for i in inputs]


def _flags(**options) -> List[str]:
    """--name value for each option given (None: the CLI's default; True: a flag)."""
    out: List[str] = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        out += [flag] if value is True else [flag, str(value)]
    return out


def _with(args: List[str], flags: List[str]) -> List[str]:
    """args with flags after the command's name (before the "--" that ends options)."""
    return args[:1] + flags + args[1:]


class Report(dict):
    """analyze's JSON report as a dict (docs/reference.md lists its fields).
    table(name) gives one of its lists as rows (a pandas DataFrame when pandas is
    installed); in Jupyter the report shows as analyze's HTML page."""

    def __init__(self, document: dict, args: List[str], warnings: List[str]):
        super().__init__(document)
        self._args = args
        self.warnings = warnings
        self._html: Optional[str] = None

    def tables(self) -> List[str]:
        """The names table() takes: the report's lists of rows."""
        return [k for k, v in self.items() if isinstance(v, list) and all(isinstance(r, dict) for r in v)]

    def table(self, name: str):
        if name not in self.tables():
            raise KeyError(f"no table {name!r} in this report (tables: {', '.join(self.tables())})")
        rows = self[name]
        try:
            import pandas
        except ImportError:
            return rows
        return pandas.DataFrame(rows)

    def render(self, format: str = "text", top: Optional[int] = None) -> str:
        """The report in another of analyze's formats (text, html, csv), rendered by a
        second pass over the inputs: the same as the CLI with --format."""
        return _call(_with(self._args, ["--format", format] + _flags(top=top)))[0].decode()

    def _repr_html_(self) -> str:
        if self._html is None:
            self._html = self.render("html")
        return self._html


class Comparison(dict):
    """compare's JSON document as a dict. `status` is the CLI's exit status: 0, or 4 when
    a --fail-on rule fired (`failed`)."""

    def __init__(self, document: dict, args: List[str], status: int, warnings: List[str]):
        super().__init__(document)
        self._args = args
        self.status = status
        self.warnings = warnings

    @property
    def failed(self) -> bool:
        return self.status == 4

    def render(self, format: str = "text", top: Optional[int] = None) -> str:
        """The comparison as the CLI prints it: text or markdown."""
        return _call(_with(self._args, ["--format", format] + _flags(top=top)), ok=(0, 4))[0].decode()


def analyze(
    inputs,
    *,
    top: Optional[int] = None,
    group_by: Optional[str] = None,
    straggler_threshold: Optional[int] = None,
    threads: Optional[int] = None,
    strict: bool = False,
    allow_truncated: bool = False,
    max_snapshot_items: Optional[int] = None,
) -> Report:
    """analyze as a dict: one trace, a memory snapshot, rank summaries, several ranks'
    traces, or a folder of them (what on_trace_ready writes). Raises Error."""
    args = ["analyze"] + _flags(
        group_by=group_by,
        straggler_threshold=straggler_threshold,
        threads=threads,
        strict=strict,
        allow_truncated=allow_truncated,
        max_snapshot_items=max_snapshot_items,
    )
    args += ["--"] + _inputs(inputs)
    out, warnings, _ = _call(_with(args, ["--format", "json"] + _flags(top=top)))
    return Report(json.loads(out), args, warnings)


def convert(
    inputs,
    output: PathLike,
    *,
    format: Optional[str] = None,
    sample_type: Optional[str] = None,
    critical: bool = False,
    thread_stacks: bool = False,
    all_frames: bool = False,
    step_labels: Optional[str] = None,
    folded_root: Optional[str] = None,
    max_depth: Optional[int] = None,
    threads: Optional[int] = None,
    strict: bool = False,
    allow_truncated: bool = False,
    max_snapshot_items: Optional[int] = None,
    force: bool = False,
) -> List[str]:
    """convert: the profile written to `output` (.pb.gz, or folded/pstats by name or
    format), atomically. Returns the warnings. Raises Error."""
    files = _inputs(inputs)
    args = ["convert"] + _flags(
        format=format,
        sample_type=sample_type,
        critical=critical,
        thread_stacks=thread_stacks,
        all_frames=all_frames,
        step_labels=step_labels,
        folded_root=folded_root,
        max_depth=max_depth,
        threads=threads,
        strict=strict,
        allow_truncated=allow_truncated,
        max_snapshot_items=max_snapshot_items,
        force=force,
    )
    target = os.fspath(output)
    args += ["--"] + files + [target] if len(files) == 1 else ["-o", target, "--"] + files
    return _call(args)[1]


def compare(
    base: PathLike,
    new: PathLike,
    *,
    fail_on: Sequence[str] = (),
    noise_aware: bool = False,
    output: Optional[PathLike] = None,
    top: Optional[int] = None,
    group_by: Optional[str] = None,
    threads: Optional[int] = None,
    strict: bool = False,
    allow_truncated: bool = False,
    force: bool = False,
) -> Comparison:
    """compare as a dict, with the CLI's exit status (4: a rule in fail_on fired);
    output: also the pprof diff. Raises Error for anything else."""
    args = ["compare"] + _flags(
        noise_aware=noise_aware,
        group_by=group_by,
        threads=threads,
        strict=strict,
        allow_truncated=allow_truncated,
    )
    for rule in [fail_on] if isinstance(fail_on, str) else fail_on:
        args += ["--fail-on", rule]
    args += ["--", os.fspath(base), os.fspath(new)]
    # The diff is written by this run only: render() runs the comparison without it.
    diff = [] if output is None else _flags(output=os.fspath(output), force=force)
    out, lines, status = _call(_with(args, ["--format", "json"] + _flags(top=top) + diff), ok=(0, 4))
    return Comparison(json.loads(out), args, status, lines)


def summarize(
    trace: PathLike,
    output: Optional[PathLike] = None,
    *,
    threads: Optional[int] = None,
    strict: bool = False,
    allow_truncated: bool = False,
    force: bool = False,
) -> dict:
    """summarize, the map of analyze over many ranks: the rank summary as a dict, also
    written to output (NAME.summary.json) when given. Raises Error."""
    flags = _flags(threads=threads, strict=strict, allow_truncated=allow_truncated, force=force)
    if output is not None:
        _call(["summarize"] + flags + ["-o", os.fspath(output), "--", os.fspath(trace)])
        with open(output, encoding="utf-8") as f:
            return json.load(f)
    with tempfile.TemporaryDirectory(prefix="torch2pprof-") as tmp:
        path = os.path.join(tmp, "rank.summary.json")
        _call(["summarize"] + flags + ["-o", path, "--", os.fspath(trace)])
        with open(path, encoding="utf-8") as f:
            return json.load(f)
