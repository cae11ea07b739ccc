"""The wheel end to end (ctest e2e_wheel): scripts/build-wheel.sh builds and repairs it;
then, in fresh virtual environments, with nothing from the build on their path:
- the wheel: a manylinux tag, its size, the CLI and the bundled libraries inside, every
  library its ELF files need found (auditwheel show, ldd);
- without torch: import, the console script, and the Python API's results equal to the
  CLI binary's bytes (analyze in each format, convert, compare with its exit status,
  summarize) and its errors equal to the CLI's line and exit status;
- with torch 2.13.0: 2 gloo ranks of DDP under torch.profiler with on_trace_ready over
  several schedule cycles: every file of every cycle, the plain .json gone, pprof read by
  go tool pprof, the summaries' reduce equal to the traces' report (every format), the
  chained handler called each cycle;
- faults: the CLI binary removed, a folder that cannot be written, the worker killed:
  training runs every step, each failure logged once;
- pip install . from the source (the build isolated, as users run it) and the README's
  example, with pandas beside it (Report.table is then a DataFrame).
Usage: wheel_e2e.py --source DIR --python PYTHON3 [--wheel WHEEL]"""
import argparse
import glob
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from e2e_common import Tally  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE_GOAL = 15 * 2**20


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


def venv(path, python, *packages):
    subprocess.run([python, "-m", "venv", path], check=True)
    pip = [os.path.join(path, "bin", "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + list(packages), check=True)
    return os.path.join(path, "bin", "python")


def check_wheel(t, wheel):
    name = os.path.basename(wheel)
    size = os.path.getsize(wheel)
    files = zipfile.ZipFile(wheel).namelist()
    print(f"     wheel {name}: {size / 2**20:.1f} MiB")
    problems = []
    if "manylinux_" not in name:
        problems.append(f"no manylinux tag: {name}")
    if size > SIZE_GOAL:
        problems.append(f"{size} bytes, over the 15 MiB goal")
    for want in ("torch2pprof/bin/torch2pprof", "torch2pprof/__init__.py", "torch2pprof/_worker.py"):
        if want not in files:
            problems.append(f"{want} missing")
    if not any(f.startswith("torch2pprof/_core") and f.endswith(".so") for f in files):
        problems.append("no extension module")
    if not any(f.startswith("torch2pprof.libs/libsimdjson") for f in files):
        problems.append("libsimdjson not bundled")
    t.report("wheel: manylinux tag, size, CLI and bundled libraries inside", problems)


def check_no_torch(t, py, site, traces, scratch):
    """The API in a venv without torch: the CLI's bytes, statuses and lines."""
    binary = os.path.join(site, "torch2pprof", "bin", "torch2pprof")
    problems = []
    # This machine has libsimdjson and libisal too: the wheel's own copies must be the
    # ones found, or a machine without them would fail.
    bundled = os.path.realpath(os.path.join(site, "torch2pprof.libs"))
    for elf in [binary] + glob.glob(os.path.join(site, "torch2pprof", "_core*.so")):
        ldd = sh(["ldd", elf]).stdout.decode()
        if "not found" in ldd:
            problems.append(f"{elf}: {ldd}")
        for lib in ("libsimdjson", "libisal"):
            line = next((x for x in ldd.splitlines() if lib in x), "")
            if line and bundled not in os.path.realpath(line.split("=>")[-1].split("(")[0].strip()):
                problems.append(f"{os.path.basename(elf)} finds {lib} outside the wheel: {line.strip()}")
            if not line and os.path.basename(elf) == "torch2pprof":
                problems.append(f"the CLI does not link {lib}: {ldd}")
    r = sh([py, "-c", "import sys, torch2pprof; print(torch2pprof.__version__, 'torch' in sys.modules)"])
    if r.returncode != 0 or not r.stdout.decode().endswith("False\n"):
        problems.append(f"import: {r.stdout!r} {r.stderr.decode()[-300:]}")
    script = os.path.join(os.path.dirname(py), "torch2pprof")
    r = sh([script, "--version"])
    if r.returncode != 0 or not r.stdout.startswith(b"torch2pprof "):
        problems.append(f"console script: {r.returncode} {r.stderr!r}")
    t.report("without torch: imports, console script runs, every library found in the wheel", problems)

    # The API against the binary, in this venv's own process.
    probe = os.path.join(scratch, "api_vs_cli.py")
    with open(probe, "w") as f:
        f.write(API_VS_CLI)
    r = sh([py, probe, binary, scratch] + traces)
    lines = r.stdout.decode().splitlines()
    for line in lines:
        if line.startswith(("ok   ", "FAIL ")):
            t.report(line[5:].split(":")[0], [] if line.startswith("ok") else [line])
    if r.returncode != 0 or not lines:
        t.report("API vs CLI ran", [r.stderr.decode()[-2000:]])


# Run inside the venv: each API call beside the same command of the binary.
API_VS_CLI = r'''
import json, os, subprocess, sys
import torch2pprof
binary, scratch, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
def cli(*args):
    r = subprocess.run([binary] + list(args), capture_output=True)
    return r.returncode, r.stdout, r.stderr.decode()
def report(name, problems):
    print(("FAIL " if problems else "ok   ") + name + (": " + "; ".join(map(str, problems[:3])) if problems else ""))
p = []
for t in traces:
    status, out, _ = cli("analyze", "--format", "json", t)
    doc = torch2pprof.analyze(t)
    if status != 0 or json.loads(out) != dict(doc):
        p.append(f"analyze json {t}")
    if doc.table("operators") != doc["operators"]:  # no pandas here: the rows as they are
        p.append(f"table() without pandas {t}")
    for fmt in ("text", "html", "csv"):
        if doc.render(fmt).encode() != cli("analyze", "--format", fmt, t)[1]:
            p.append(f"analyze {fmt} {t}")
    if torch2pprof.run("analyze", "-top", "5", t).stdout != cli("analyze", "-top", "5", t)[1]:
        p.append(f"run -top 5 {t}")
    a, b = os.path.join(scratch, "api.pb.gz"), os.path.join(scratch, "cli.pb.gz")
    for f in (a, b):
        if os.path.exists(f): os.remove(f)
    torch2pprof.convert(t, a, critical=True)
    cli("convert", "--critical", t, b)
    if open(a, "rb").read() != open(b, "rb").read():
        p.append(f"convert {t}")
    sa, sb = os.path.join(scratch, "api.summary.json"), os.path.join(scratch, "cli.summary.json")
    for f in (sa, sb):
        if os.path.exists(f): os.remove(f)
    s = torch2pprof.summarize(t, sa)
    cli("summarize", "-o", sb, t)
    if open(sa, "rb").read() != open(sb, "rb").read() or s != json.load(open(sb)):
        p.append(f"summarize {t}")
report("API = CLI bytes: analyze (json, text, html, csv), run, convert, summarize", p)
p = []
base, new = traces[0], traces[-1]
for rules in ([], ["step_time>+1%"], ["step_time>+1000%"]):
    args = [a for r in rules for a in ("--fail-on", r)]
    status, out, _ = cli("compare", "--format", "json", *args, base, new)
    c = torch2pprof.compare(base, new, fail_on=rules)
    if c.status != status or dict(c) != json.loads(out):
        p.append(f"compare {rules}: {c.status} vs {status}")
    if c.render("markdown").encode() != cli("compare", "--format", "markdown", *args, base, new)[1]:
        p.append(f"compare markdown {rules}")
report("API = CLI: compare with its exit status (0, 4)", p)
p = []
bad = os.path.join(scratch, "bad.json")
open(bad, "w").write('{"traceEvents": [{"ph": "X", "ts": 1, "dur": ')
cases = [("analyze", [bad], lambda: torch2pprof.analyze(bad)),
         ("analyze", ["--format", "json", "--top", "-1", traces[0]], lambda: torch2pprof.analyze(traces[0], top=-1)),
         ("convert", [traces[0], os.path.join(scratch, "no", "such", "dir", "x.pb.gz")],
          lambda: torch2pprof.convert(traces[0], os.path.join(scratch, "no", "such", "dir", "x.pb.gz"))),
         ("compare", [traces[0], "/nonexistent.json"], lambda: torch2pprof.compare(traces[0], "/nonexistent.json"))]
seen = set()
for command, args, call in cases:
    status, _, err = cli(command, *args)
    try:
        call()
        p.append(f"{command} {args}: no Error")
    except torch2pprof.Error as e:
        seen.add(e.status)
        if e.status != status or "torch2pprof: " + e.message != err.splitlines()[-1]:
            p.append(f"{command}: {e.status} {e.message!r} vs {status} {err!r}")
if seen != {1, 2, 3}:
    p.append(f"statuses seen {sorted(seen)}, want 1, 2, 3")
report("Error: the CLI's line and exit status (1 input, 2 usage, 3 output)", p)
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(py, out, world, env):
    port = free_port()
    procs = []
    for rank in range(world):
        e = dict(env, RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([py, os.path.join(HERE, "train_with_handler.py"), "ranks", out, str(world)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e))
    results = []
    for p in procs:
        o, err = p.communicate(timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"rank exit {p.returncode}: {err.decode()[-2000:]}")
        results.append(json.loads(o.decode().strip().splitlines()[-1]))
    return results


def check_ranks(t, py, binary, scratch, go):
    out = os.path.join(scratch, "prof")
    results = run_ranks(py, out, 2, dict(os.environ))
    problems = []
    # wait=1, warmup=1, active=2 over 10 steps: cycles end at steps 3 and 7; the stop cuts
    # the third short (step 10 is where it stands).
    want = ["rank{r}.step3", "rank{r}.step7", "rank{r}.step10.partial"]
    for rank, res in enumerate(results):
        if res["steps"] != 10 or not res["finished"]:
            problems.append(f"rank {rank}: {res}")
        if len(res["then"]) != 3:
            problems.append(f"rank {rank}: the chained handler ran {len(res['then'])} times, not 3")
        if res["log"]:
            problems.append(f"rank {rank} logged {res['log']}")
        for stem in (w.format(r=rank) for w in want):
            for suffix in (".pt.trace.json.gz", ".summary.json", ".pb.gz", ".html"):
                if not os.path.exists(os.path.join(out, stem + suffix)):
                    problems.append(f"{stem}{suffix} missing")
            if os.path.exists(os.path.join(out, stem + ".pt.trace.json")):
                problems.append(f"{stem}.pt.trace.json left behind")
            if os.path.exists(os.path.join(out, stem + ".pt.trace.json.gz")):
                doc = json.loads(gzip.open(os.path.join(out, stem + ".pt.trace.json.gz")).read())
                if doc.get("distributedInfo", {}).get("rank") != rank:
                    problems.append(f"{stem}: distributedInfo {doc.get('distributedInfo')}")
    left = [f for f in os.listdir(out) if f.endswith(".tmp")]
    if left:
        problems.append(f"temporary files left: {left}")
    t.report("2 gloo ranks, 3 cycles: every output of every cycle, the plain .json gone, rank names", problems)

    problems = []
    for f in sorted(glob.glob(os.path.join(out, "*.pb.gz"))):
        r = sh([go, "tool", "pprof", "-raw", f], env=dict(os.environ, PPROF_TMPDIR=scratch))
        if r.returncode != 0 or b"Samples:" not in r.stdout:
            problems.append(f"{f}: {r.stderr.decode()[-300:]}")
    t.report("go tool pprof reads every cycle's profile", problems)

    # The folder (summaries, the last complete cycle) against that cycle's traces.
    problems = []
    traces = [os.path.join(out, f"rank{r}.step7.pt.trace.json.gz") for r in range(2)]
    for fmt in ("text", "json", "csv", "html"):
        folder = sh([binary, "analyze", "--format", fmt, out])
        direct = sh([binary, "analyze", "--format", fmt] + traces)
        if folder.returncode != 0 or folder.stdout != direct.stdout:
            problems.append(f"{fmt}: the folder's report differs from the traces' ({folder.stderr.decode()[-300:]})")
        if b"analysing the last complete one, step 7" not in folder.stderr:
            problems.append(f"{fmt}: no note of the cycle chosen: {folder.stderr.decode()[-300:]}")
    # The reduce read the summaries: with the traces gone it still gives the report.
    hidden = os.path.join(scratch, "hidden")
    os.makedirs(hidden)
    for tr in traces:
        shutil.move(tr, hidden)
    summaries_only = sh([binary, "analyze", "--format", "json", out])
    for tr in traces:
        shutil.move(os.path.join(hidden, os.path.basename(tr)), out)
    want_doc = json.loads(sh([binary, "analyze", "--format", "json"] + traces).stdout)
    got_doc = json.loads(summaries_only.stdout or b"{}")
    for doc in (want_doc, got_doc):
        for r in doc.get("ranks", []):
            r.pop("file", None)
    if got_doc != want_doc:
        problems.append("the summaries alone give another report")
    api = sh([py, "-c", "import json, sys, torch2pprof; print(json.dumps(torch2pprof.analyze(sys.argv[1])))", out])
    if api.returncode != 0 or json.loads(api.stdout) != json.loads(sh([binary, "analyze", "--format", "json", out]).stdout):
        problems.append(f"torch2pprof.analyze(folder): {api.stderr.decode()[-300:]}")
    t.report("the folder's summaries reduce to the traces' report (text, json, csv, html; API)", problems)


# The README's example, with a model and a loader of its own.
EXAMPLE = r'''
import torch, torch2pprof
from torch.profiler import profile, schedule
model = torch.nn.Linear(32, 32); opt = torch.optim.SGD(model.parameters(), lr=0.1)
handler = torch2pprof.on_trace_ready("prof/", report="html")
with profile(schedule=schedule(wait=1, warmup=1, active=3), on_trace_ready=handler) as p:
    for batch in [torch.randn(8, 32) for _ in range(12)]:
        model(batch).sum().backward(); opt.step(); p.step()
report = torch2pprof.analyze("prof/")
assert [s["name"] for s in report["steps"]] == ["ProfilerStep#7", "ProfilerStep#8", "ProfilerStep#9"], report["steps"]
import pandas  # installed beside: table() is then a DataFrame of the JSON's rows
df = report.table("operators")
assert isinstance(df, pandas.DataFrame) and len(df) == len(report["operators"]) > 0
assert list(df.columns) == list(report["operators"][0]) and "<html" in report._repr_html_()
torch2pprof.convert("prof/pid%d.step9.pt.trace.json.gz" % __import__("os").getpid(), "t.pb.gz")
# Whether the rule fires is the machine's business (a loaded CI runner slows a cycle
# 100-fold): the verdict and the exit status must agree, and the headline lead.
c = torch2pprof.compare(handler.traces[0], handler.traces[1], fail_on=["step_time>+1000%"])
assert c.status in (0, 4) and c.failed == (c.status == 4) and next(iter(c)) == "headline"
print("example ok")
'''


def check_source_install(t, python, source, scratch):
    """pip install . from the source, as a user of the clone runs it (the build isolated,
    its requirements from pyproject.toml), then the README's example."""
    py = venv(os.path.join(scratch, "source"), python, "torch==2.13.0", "numpy", "pandas")
    r = sh([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", source])
    if r.returncode != 0:
        t.report("pip install . (isolated build) and the README's example", [r.stderr.decode()[-2000:]])
        return
    work = os.path.join(scratch, "example")
    os.makedirs(work)
    with open(os.path.join(work, "example.py"), "w") as f:
        f.write(EXAMPLE)
    r = sh([py, "example.py"], cwd=work)
    t.report("pip install . (isolated build) and the README's example",
             [] if r.returncode == 0 and b"example ok" in r.stdout else [r.stderr.decode()[-2000:]])


def check_faults(t, py, wheel, scratch):
    # The CLI binary removed: a copy of the package without it, first on the path.
    target = os.path.join(scratch, "nobinary")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--target", target, wheel], check=True)
    os.remove(os.path.join(target, "torch2pprof", "bin", "torch2pprof"))
    wall = os.path.join(scratch, "a-file")
    open(wall, "w").close()
    cases = {
        "binary": (os.path.join(scratch, "fault-binary"), dict(os.environ, PYTHONPATH=target)),
        "readonly": (os.path.join(wall, "prof"), dict(os.environ)),  # under a file: not even root writes there
        "killed": (os.path.join(scratch, "fault-killed"), dict(os.environ)),
    }
    for kind, (out, env) in cases.items():
        r = sh([py, os.path.join(HERE, "train_with_handler.py"), "fault", out, kind], env=env, timeout=600)
        problems = []
        try:
            res = json.loads(r.stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            t.report(f"fault {kind}: training goes on", [f"exit {r.returncode}: {r.stderr.decode()[-1500:]}"])
            continue
        if r.returncode != 0 or res["steps"] != 10 or len(res["then"]) != 3:
            problems.append(f"training: {res}")
        log = res["log"]
        if kind == "binary":
            if len(log) != 1 or "cannot run" not in log[0]:
                problems.append(f"log {log}")
            if len(glob.glob(os.path.join(out, "*.pt.trace.json.gz"))) != 3:
                problems.append(f"the traces were not gzipped: {os.listdir(out)}")
        if kind == "readonly" and (len(log) != 1 or "cannot write the trace" not in log[0]):
            problems.append(f"log {log}")
        if kind == "killed":
            if not res["killed"] or len(log) != 1 or "died of signal 9" not in log[0]:
                problems.append(f"log {log}, killed {res['killed']}")
            if not os.path.exists(os.path.join(out, "pid%s.step7.pb.gz" % "*")) and not glob.glob(
                    os.path.join(out, "*.step7.pb.gz")):
                problems.append(f"the cycle after the kill has no outputs: {os.listdir(out)}")
        t.report(f"fault {kind}: every step runs, the failure logged once", problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--python", default="python3", help="the interpreter the venvs are made from")
    ap.add_argument("--wheel", help="a built wheel (default: scripts/build-wheel.sh builds it)")
    args = ap.parse_args()
    t = Tally()
    wheel = args.wheel and os.path.abspath(args.wheel)
    args.source = os.path.abspath(args.source)
    if not wheel:
        r = subprocess.run(["bash", os.path.join(args.source, "scripts", "build-wheel.sh")], capture_output=True)
        if r.returncode != 0:
            print(r.stdout.decode()[-3000:], r.stderr.decode()[-3000:])
            t.report("scripts/build-wheel.sh", [f"exit {r.returncode}"])
            return t.summary()
        wheel = glob.glob(os.path.join(args.source, "build", "wheelhouse", "*.whl"))[0]
    check_wheel(t, wheel)
    go = shutil.which("go") or "/usr/lib/go/bin/go"
    shared = os.path.join(args.source, "testdata", "real", "torch211")
    traces = [os.path.join(shared, n) for n in ("lm_train.pt.trace.json.gz", "ddp_gloo_2ranks_rank0.pt.trace.json.gz")]
    with tempfile.TemporaryDirectory(prefix="t2p-wheel-") as scratch:
        os.chdir(scratch)  # nothing of the source tree on the path
        bare = venv(os.path.join(scratch, "bare"), args.python, wheel)
        site = sh([bare, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"]).stdout.decode().strip()
        check_no_torch(t, bare, site, traces, scratch)
        py = venv(os.path.join(scratch, "torch"), args.python, "torch==2.13.0", "numpy", wheel)
        binary = os.path.join(sh([py, "-c", "import torch2pprof._api as a; print(a.binary())"]).stdout.decode().strip())
        check_ranks(t, py, binary, scratch, go)
        check_faults(t, py, wheel, scratch)
        check_source_install(t, args.python, args.source, scratch)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
