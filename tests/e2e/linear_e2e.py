#!/usr/bin/env python3
"""Inputs shaped to cost more than their size (tests/e2e/shapes.py), each at n and 4n:
convert and analyze (text and HTML) succeed, and the larger costs at most about four
times the smaller, measured by what the machine's load does not change:
- CPU time (user + system, as /usr/bin/time reads it): at most 8x the smaller's plus 0.3 s, where a
  quadratic cost reads 16x. The sizes are those at which the quadratic code this replaced
  took seconds at 4n, so it fails here; a loaded runner slows both sizes alike.
- peak RSS: at most 6x plus 40 MiB; and what is written (the report, the profile) at most
  6x plus 1 MB, and never more than `page_mb` where the shape has a bound of its own.
Never wall-clock time: a shared CI runner's load would fail it.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shapes  # noqa: E402
from e2e_common import Tally  # noqa: E402

# shape: n (4n is the larger), what the quadratic code cost at 4n (measured at 42f130d)
CASES = {
    'deep': (20000, 'a chain of 80,000 nested calls: 7 s'),
    'python_in_op': (20000, 'an operator holding 80,000 Python launchers: 7 s (each launch asked every child)'),
    'threads': (4000, '16,000 launching threads and as many steps: 8 s'),
    'side_sync': (10000, 'a synchronization over 40,000 steps: 20 s'),
    'nested_steps': (4000, '16,000 nested ProfilerSteps: 16 s'),
    'devices': (20000, 'a snapshot of 80,000 devices: 10 s'),
    'long_name': (100, 'a 1 MiB name over 400 steps: 2 GiB for the HTML'),
    'steps_html': (20000, 'an HTML page of 80,000 steps: 50 MB'),
    'shared_file': (100, 'frames sharing a 1 MiB file name: 2 GiB'),
    'ranks_renumbered': (500, '2,000 ranks whose step numbers differ: 1 GiB, a 260 MB JSON'),
}
PAGE_MB = {'steps_html': 12}  # the HTML lists and chart stop at 10,000 and 1,000 steps
# Inputs of about 1 MB whose cost was their size times a name's length: a bound of their own.
RSS_MB = {'long_name': 100, 'shared_file': 100}


def run(args, written):
    """(exit status, stderr, CPU seconds, peak RSS MiB, MB written to stdout or `written`) of
    a command, as /usr/bin/time reads its rusage: a child forked from this Python process
    would count this process's pages in its peak until it execs."""
    with tempfile.TemporaryFile() as out:
        r = subprocess.run(['/usr/bin/time', '-q', '-f', 'measured=%U %S %M'] + args, stdout=out,
                           stderr=subprocess.PIPE, text=True, errors='replace')
        err, _, last = r.stderr.rstrip('\n').rpartition('\n')
        if not last.startswith('measured='):
            err, last = r.stderr, 'measured=0 0 0'
        user, system, kb = last[len('measured='):].split()
        size = os.fstat(out.fileno()).st_size + (os.path.getsize(written) if os.path.exists(written) else 0)
        return r.returncode, err, float(user) + float(system), int(kb) / 1024, size / 1e6


def summary(binary, testdata, tmp):
    """A real rank's summary (of a DDP rank's trace), as summarize writes it."""
    path = os.path.join(tmp, 'source.summary.json')
    if not os.path.exists(path):
        trace = os.path.join(testdata, 'real', 'torch211', 'ddp_gloo_4ranks_late2_rank0.pt.trace.json.gz')
        subprocess.run([binary, 'summarize', '--quiet', trace, '-o', path], check=True)
    with open(path, 'rb') as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--sanitized', action='store_true', help='a sanitizer build: margins wider, sizes smaller')
    a = ap.parse_args()
    c = Tally()
    scale = 4 if a.sanitized else 1
    with tempfile.TemporaryDirectory() as tmp:
        for name, (n, was) in CASES.items():
            n //= scale
            cost = {}
            problems = []
            for size in (n, 4 * n):
                if name == 'ranks_renumbered':  # a folder of summaries, which only analyze reads
                    path = os.path.join(tmp, f'{name}_{size}')
                    os.makedirs(path)
                    for file, data in shapes.ranks_renumbered(size, summary(a.binary, a.testdata, tmp)).items():
                        with open(os.path.join(path, file), 'wb') as f:
                            f.write(data)
                else:
                    data = getattr(shapes, name)(size)
                    path = os.path.join(tmp, f'{name}_{size}' + ('.pickle' if data[:1] == b'\x80' else '.json'))
                    with open(path, 'wb') as f:
                        f.write(data)
                    del data
                out = os.path.join(tmp, 'o.pb.gz')
                commands = [['analyze', path], ['analyze', '--format', 'html', path], ['analyze', '--format', 'json', path]]
                if os.path.isfile(path):
                    commands.insert(0, ['convert', path, out])
                for cmd in commands:
                    if os.path.exists(out):
                        os.remove(out)
                    status, err, cpu, rss, mb = run([a.binary] + cmd, out)
                    shown = ' '.join(cmd[:-1] if cmd[0] == 'analyze' else cmd[:1])
                    if status != 0:
                        problems.append(f'{shown} {size}: exit {status}: {err[-200:]!r}')
                    # Absolute bounds in the plain build only: ASan's allocator keeps up to 256 MiB
                    # of freed memory in quarantine, whatever the input (the n-to-4n ratio holds).
                    if not a.sanitized and rss > RSS_MB.get(name, 1e9):
                        problems.append(f'{shown} {size}: peak RSS {rss:.0f} MiB (bound {RSS_MB[name]} MiB)')
                    if 'html' in cmd and mb > PAGE_MB.get(name, 1e9):
                        problems.append(f'{shown} {size}: a page of {mb:.1f} MB (bound {PAGE_MB[name]} MB)')
                    cost.setdefault(shown, []).append((cpu, rss, mb))
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
            for cmd, ((cpu1, rss1, mb1), (cpu4, rss4, mb4)) in cost.items():
                if mb4 > 6 * mb1 + 1:
                    problems.append(f'{cmd}: {mb1:.1f} -> {mb4:.1f} MB written for 4x the input')
                if cpu4 > 8 * cpu1 + 0.3 * scale:
                    problems.append(f'{cmd}: CPU {cpu1:.2f} -> {cpu4:.2f} s for 4x the input (quadratic reads 16x)')
                if rss4 > 6 * rss1 + 40:
                    problems.append(f'{cmd}: peak RSS {rss1:.0f} -> {rss4:.0f} MiB for 4x the input')
            shown = ', '.join(f'{cmd} {v[0][0]:.2f}->{v[1][0]:.2f} s' for cmd, v in cost.items())
            c.report(f'{name} at {n:,} and {4 * n:,} (was {was}): CPU {shown}', problems)
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
