#!/usr/bin/env python3
"""A trace someone was sent, and a careless command line: what reaches the terminal and
the disk, end to end through the real binary.

- Control characters (ESC, BEL, NUL, newline, DEL and C1's CSI) in event names, thread
  names and the file's own name never reach stdout or stderr raw, in any format of
  analyze, compare and convert (text, markdown, CSV, HTML, folded, pstats, and
  go tool pprof reading the profile); JSON escapes them as JSON does and keeps the names;
  every error and warning is one line.
- CSV opened by a spreadsheet: a name starting with = + - @ is text, not a formula.
- Output: /dev/full fails with exit 3 for every command and format; an empty output name
  is a usage error; a file torch2pprof did not write is not replaced without --force;
  /dev/stdout redirected to a file gets the profile (checked through a link to
  /proc/self/fd/1 in a scratch directory, as /dev/stdout is one).

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import csv
import gzip
import io
import json
import marshal
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402

EVIL = 'op\x1b]0;pwned\x07\x1b[2J\x00nul\nline\x7f\u009b31m'
THREAD = 'worker\x1b[31m\nred'


def raw_controls(data):
    """Control bytes a terminal acts on: C0 but the line break, DEL, and C1 (UTF-8 C2 80-9F)."""
    bad = [b for b in data if (b < 0x20 and b not in (0x0a,)) or b == 0x7f]
    bad += [data[i + 1] for i in range(len(data) - 1) if data[i] == 0xc2 and 0x80 <= data[i + 1] < 0xa0]
    return bad


def trace_with(names):
    ev = [{'ph': 'M', 'name': 'thread_name', 'pid': 1, 'tid': 1, 'args': {'name': THREAD}}]
    for k, name in enumerate(names):
        ev.append({'ph': 'X', 'cat': 'cpu_op', 'name': name, 'pid': 1, 'tid': 1, 'ts': 100 * k, 'dur': 50})
    return json.dumps({'traceEvents': ev})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    a = ap.parse_args()
    c = Tally()
    run = lambda *args, **kw: subprocess.run([a.binary] + list(args), capture_output=True, **kw)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, 'evil\x1b]0;x\x07\nname.json')
        names = [EVIL, '=HYPERLINK("http://x","y")', '+cmd', '-2+3', '@SUM(A1)', 'aten::mm']
        open(trace, 'w').write(trace_with(names))

        outputs = {}
        for fmt in ('text', 'json', 'csv', 'html'):
            outputs['analyze ' + fmt] = run('analyze', '--format', fmt, trace)
        outputs['analyze csv modules'] = run('analyze', '--format', 'csv', '--table', 'operators', trace)
        for fmt in ('text', 'json', 'markdown'):
            outputs['compare ' + fmt] = run('compare', '--format', fmt, trace, trace)
        for ext in ('folded', 'prof', 'pb.gz'):
            out = os.path.join(tmp, 'o.' + ext)
            r = run('convert', trace, out)
            outputs['convert ' + ext] = r
            data = open(out, 'rb').read() if os.path.exists(out) else b''
            if ext == 'pb.gz':
                top = subprocess.run(['go', 'tool', 'pprof', '-top', '-tagroot=thread', out], capture_output=True)
                outputs['go tool pprof -top'] = top
            elif ext == 'folded':
                problems = [f'raw control bytes {raw_controls(data)[:5]}'] if raw_controls(data) else []
                c.report('folded: no raw control bytes', problems)
            else:
                stats = marshal.loads(data)
                bad = [k for k in stats if raw_controls(k[2].encode())]
                c.report('pstats: function names without raw control bytes', [str(bad[:2])] if bad else [])
        for what, r in outputs.items():
            problems = []
            if r.returncode != 0:
                problems.append(f'exit {r.returncode}: {r.stderr[-200:]!r}')
            if not what.endswith('json') and raw_controls(r.stdout):
                problems.append(f'stdout has raw control bytes {raw_controls(r.stdout)[:5]}')
            if raw_controls(r.stderr):
                problems.append(f'stderr has raw control bytes {raw_controls(r.stderr)[:5]}')
            c.report(f'{what}: nothing raw reaches the terminal', problems)
        j = json.loads(outputs['analyze json'].stdout)
        got = {o['name'] for o in j['operators']}
        c.report('JSON keeps the names exactly, escaped as JSON does',
                 [] if set(names) <= got and not raw_controls(outputs['analyze json'].stdout)
                 else [f'names {sorted(got)[:3]}'])
        rows = list(csv.DictReader(io.StringIO(outputs['analyze csv modules'].stdout.decode())))
        formulas = [r['name'] for r in rows if r['name'][:1] in '=+-@']
        c.report('CSV: no cell starts as a formula', [f'{formulas}'] if formulas else [])
        quoted = {r['name'] for r in rows}
        c.report('CSV: such a name is kept behind a quote mark',
                 [] if "'=HYPERLINK(\"http://x\",\"y\")" in quoted and "'-2+3" in quoted else [f'{sorted(quoted)}'])

        # Errors: one line, nothing raw, for a hostile file name and a hostile --fail-on.
        for args in (['analyze', os.path.join(tmp, 'missing\x1b[2J\nx.json')],
                     ['compare', '--fail-on', 'step_time>+5%\nevil\x1b[31m', trace, trace],
                     ['convert', trace, os.path.join(tmp, 'no\x07dir', 'x.pb.gz')]):
            r = run(*args)
            lines = r.stderr.split(b'\n')
            problems = []
            if r.returncode == 0:
                problems.append('exit 0')
            if len([ln for ln in lines if ln]) != 1 or not lines[0].startswith(b'torch2pprof: '):
                problems.append(f'stderr is not one line: {r.stderr!r}')
            if raw_controls(r.stderr):
                problems.append('raw control bytes')
            c.report(f'{args[0]} error with control characters: one visible line', problems)

        # Output: a full disk fails every command and format with exit 3 and one line.
        with open('/dev/full', 'wb') as full:
            for args in (['analyze', trace], ['analyze', '--format', 'json', trace],
                         ['analyze', '--format', 'csv', trace], ['analyze', '--format', 'html', trace],
                         ['compare', trace, trace], ['compare', '--format', 'json', trace, trace],
                         ['compare', '--format', 'markdown', trace, trace], ['convert', trace, '-'],
                         ['convert', '--format', 'folded', trace, '-'], ['convert', trace, '/dev/full']):
                r = subprocess.run([a.binary] + args, stdout=full, stderr=subprocess.PIPE)
                ok = r.returncode == 3 and r.stderr.count(b'\n') == 1 and r.stderr.startswith(b'torch2pprof: ')
                shown = ' '.join(x if x != trace else 'TRACE' for x in args)
                c.report(f'{shown} > /dev/full: exit 3, one line',
                         [] if ok else [f'exit {r.returncode}: {r.stderr!r}'])
        # An empty output name never shifts the next word into its place.
        other = os.path.join(tmp, 'rank1.json')
        open(other, 'w').write(trace_with(['a']))
        before = open(other).read()
        for args in (['convert', '-o', '', trace, other], ['convert', trace, ''], ['convert', '--output=', trace]):
            r = run(*args)
            c.report(f'empty output name {args[1:3]!r}: usage error, nothing written',
                     [] if r.returncode == 2 and open(other).read() == before else [f'exit {r.returncode}'])
        # A file torch2pprof did not write stays unless --force.
        script = os.path.join(tmp, 'notes.pb.gz')
        open(script, 'w').write('my notes\n')
        r = run('convert', trace, script)
        forced = run('convert', '--force', trace, script)
        c.report('a file torch2pprof did not write is refused (exit 3) unless --force',
                 [] if r.returncode == 3 and forced.returncode == 0 else [f'exits {r.returncode} {forced.returncode}'])
        # /dev/stdout redirected to a file: in place, through a link that behaves the same.
        link = os.path.join(tmp, 'stdout')
        os.symlink('/proc/self/fd/1', link)
        redirected = os.path.join(tmp, 'redirected.pb.gz')
        with open(redirected, 'wb') as f:
            r = subprocess.run([a.binary, 'convert', trace, link], stdout=f, stderr=subprocess.PIPE)
        data = open(redirected, 'rb').read()
        ok = r.returncode == 0 and os.path.islink(link) and data[:2] == b'\x1f\x8b' and gzip.decompress(data)
        c.report('a link to /proc/self/fd/1 (as /dev/stdout) is written in place, the link kept',
                 [] if ok else [f'exit {r.returncode}, {len(data)} bytes, link kept {os.path.islink(link)}'])
        bounded_checks(c, a.binary, tmp)
    return c.summary()


def peak_rss_kb(args, **kw):
    """Runs a command; returns (exit status, stderr, its peak RSS in KiB)."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = subprocess.run(args, capture_output=True, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return r.returncode, r.stderr, max(after, before) if after > before else after


def bounded_checks(c, binary, tmp):
    """Input that costs more than its size: white space is read, not held; an event or a gap
    past the limit is an error with its offset; running out of memory names the file."""
    event = b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": %d, "dur": 1}'
    # 512 MiB of spaces between two events, gzipped to half a megabyte: each child's peak RSS.
    spaces = os.path.join(tmp, 'spaces.json.gz')
    with gzip.open(spaces, 'wb', compresslevel=1) as f:
        f.write(b'{"traceEvents": [' + event % 0 + b',')
        chunk = b' ' * (1 << 20)
        for _ in range(512):
            f.write(chunk)
        f.write(event % 2 + b']}')
    status, err, rss = peak_rss_kb([binary, 'convert', '--threads', '2', spaces, os.path.join(tmp, 's.pb.gz')])
    c.report('512 MiB of white space between two events is read, not held',
             [] if status == 0 and rss < 200 * 1024 else [f'exit {status}, peak RSS {rss // 1024} MiB: {err[-200:]!r}'])
    big = os.path.join(tmp, 'big_event.json')
    with open(big, 'wb') as f:
        f.write(b'{"traceEvents": [' + event % 0 + b', {"ph": "X", "name": "' + b'x' * (65 << 20) + b'"}]}')
    r = subprocess.run([binary, 'convert', big, os.path.join(tmp, 'b.pb.gz')], capture_output=True, text=True)
    c.report('an event longer than 64 MiB is an error naming its offset',
             [] if r.returncode == 1 and 'byte 82: an event longer than 64 MiB' in r.stderr else [r.stderr[-200:]])
    if 'ASAN_OPTIONS' not in os.environ:  # the sanitizers' shadow memory needs the address space
        import resource
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (160 << 20, 160 << 20))
        names = os.path.join(tmp, 'names.json')
        with open(names, 'w') as f:
            json.dump([{'ph': 'X', 'cat': 'cpu_op', 'name': f'op_{k}', 'pid': 1, 'tid': 1, 'ts': 2 * k, 'dur': 1}
                       for k in range(400000)], f)
        r = subprocess.run([binary, 'analyze', '--threads', '1', names], capture_output=True, text=True,
                           preexec_fn=limit)
        ok = r.returncode == 1 and re.fullmatch(r'torch2pprof: \S*names\.json: out of memory while [a-z ]+: .*\n', r.stderr)
        c.report('out of memory names the file and the stage', [] if ok else [f'exit {r.returncode}: {r.stderr!r}'])


if __name__ == '__main__':
    sys.exit(main())
