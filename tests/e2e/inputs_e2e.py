#!/usr/bin/env python3
"""Every input path, end to end through the real binary: each kind of input (a trace as
.json and .json.gz, a memory snapshot as .pickle and .pickle.gz, a profile convert wrote,
a rank summary) given as a file, a FIFO, standard input ('-' and /dev/stdin) and bash's
process substitution gives the same output as the file. The input is opened once and its
kind told from the bytes already read, so a stream is never read twice.

Also: the one line each kind gets from a command that does not read it, and bounded memory
on merge and reduce inputs made to cost more than their size (peak RSS of the child
measured, with generous bounds).

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import gzip
import os
import pickle
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402


def run(binary, args, cwd, stdin_bytes=None):
    return subprocess.run([binary] + args, cwd=cwd, input=stdin_bytes, capture_output=True)


def through_fifo(binary, args, cwd, names, data):
    """Runs args in cwd where each of `names` is a FIFO fed its bytes by a thread."""
    threads = []
    for name in names:
        path = os.path.join(cwd, name)
        os.mkfifo(path)

        def feed(p=path, d=data[name]):
            try:
                with open(p, 'wb') as f:
                    f.write(d)
            except BrokenPipeError:
                pass

        t = threading.Thread(target=feed, daemon=True)
        t.start()
        threads.append(t)
    r = run(binary, args, cwd)
    for t in threads:
        t.join(timeout=60)
    return r


def outputs(r, cwd, out_name):
    """What a run gave: its exit status, stdout, stderr and the output file's bytes."""
    out = os.path.join(cwd, out_name) if out_name else None
    data = open(out, 'rb').read() if out and os.path.exists(out) else b''
    if out and os.path.exists(out):
        os.remove(out)
    return r.returncode, r.stdout, r.stderr, data


def peak_rss_mb(args):
    """Runs args; returns its result (stderr without time's line) and its peak RSS in MiB. Under
    /usr/bin/time, whose child starts small: a child of this Python process would count the
    memory Python held when it forked (Linux keeps the high-water mark across exec)."""
    r = subprocess.run(['/usr/bin/time', '-q', '-f', 'rss_kb=%M'] + args, capture_output=True)
    err, _, rss = r.stderr.rstrip(b'\n').rpartition(b'\n')
    if not rss.startswith(b'rss_kb='):
        err, rss = r.stderr, b'rss_kb=0'
    r.stderr = err + b'\n' if err else b''
    return r, int(rss[7:]) / 1024


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    tag = varint(num << 3 | wire)
    return tag + (varint(len(payload)) + payload if wire == 2 else payload)


def profile_head():
    """The head of a profile as convert writes one: a sample type, a frame, its comment."""
    strings = [b'', b'wall', b'nanoseconds', b'torch2pprof 0.1.0 convert t.json', b'f', b't.json']
    out = field(1, 2, field(1, 0, varint(1)) + field(2, 0, varint(2)))
    out += field(11, 2, field(1, 0, varint(1)) + field(2, 0, varint(2)))
    out += field(5, 2, field(1, 0, varint(1)) + field(2, 0, varint(4)) + field(3, 0, varint(4)))
    out += field(4, 2, field(1, 0, varint(1)) + field(4, 2, field(1, 0, varint(1))))
    out += field(13, 0, varint(3))
    return out + b''.join(field(6, 2, s) for s in strings)


def write_gz(path, head, chunk, repeat, tail=b''):
    with gzip.open(path, 'wb', compresslevel=9) as f:
        f.write(head)
        for _ in range(repeat):
            f.write(chunk)
        f.write(tail)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    c = Tally()
    real = os.path.join(a.testdata, 'real', 'torch211')
    with tempfile.TemporaryDirectory() as tmp:
        files = os.path.join(tmp, 'files')
        os.mkdir(files)
        trace_gz = open(os.path.join(real, 'multistream.pt.trace.json.gz'), 'rb').read()
        snap_gz = open(os.path.join(a.testdata, 'snapshots', 'oom_train.pickle.gz'), 'rb').read()
        other = os.path.join(files, 'other.json')
        with open(other, 'wb') as f:
            f.write(gzip.decompress(open(os.path.join(real, 'ddp_gloo_2ranks_rank1.pt.trace.json.gz'), 'rb').read()))
        inputs = {'in.json': gzip.decompress(trace_gz), 'in.json.gz': trace_gz,
                  'in.pickle': gzip.decompress(snap_gz), 'in.pickle.gz': snap_gz}
        for name, data in inputs.items():
            open(os.path.join(files, name), 'wb').write(data)
        # A profile convert wrote, and a rank summary summarize wrote, from the files.
        assert run(binary, ['convert', 'in.json.gz', 'in.pb.gz'], files).returncode == 0
        assert run(binary, ['summarize', 'in.json.gz', '-o', 'in.summary.json'], files).returncode == 0
        for name in ('in.pb.gz', 'in.summary.json'):
            inputs[name] = open(os.path.join(files, name), 'rb').read()
        # Without -o, summarize writes standard output, as analyze does: the same bytes.
        r = run(binary, ['summarize', 'in.json.gz'], files)
        c.report('summarize without -o writes standard output, the bytes -o writes',
                 [] if r.returncode == 0 and r.stdout == inputs['in.summary.json'] else
                 [f'exit {r.returncode}: {r.stderr[-200:]!r}'])

        # Each command on each kind: (args with IN for the input, the output file or None).
        commands = []
        for name in ('in.json', 'in.json.gz'):
            commands += [(name, ['convert', 'IN', 'out.pb.gz'], 'out.pb.gz'),
                         (name, ['convert', '--format', 'folded', 'IN', '-'], None),
                         (name, ['analyze', '--format', 'json', 'IN'], None),
                         (name, ['summarize', 'IN', '-o', '-'], None),
                         (name, ['compare', '--format', 'json', 'IN', 'IN2'], None)]
        for name in ('in.pickle', 'in.pickle.gz'):
            commands += [(name, ['convert', 'IN', 'out.pb.gz'], 'out.pb.gz'),
                         (name, ['convert', '--format', 'folded', 'IN', '-'], None),
                         (name, ['analyze', '--format', 'json', 'IN'], None),
                         (name, ['compare', '--format', 'json', 'IN', 'IN2'], None)]
        commands += [('in.pb.gz', ['convert', '-o', 'out.pb.gz', 'IN', other], 'out.pb.gz'),
                     ('in.summary.json', ['analyze', '--format', 'json', 'IN'], None),
                     ('in.summary.json', ['analyze', '--format', 'json', 'IN', other], None)]

        for name, args, out in commands:
            shown = ' '.join(args).replace('IN2', name).replace('IN', name).replace(other, 'other.json')
            given = [name if x == 'IN' else ('copy_' + name if x == 'IN2' else x) for x in args]
            if 'IN2' in args:
                shutil.copy(os.path.join(files, name), os.path.join(files, 'copy_' + name))
            want = outputs(run(binary, given, files), files, out)
            if want[0] != 0:
                c.report(f'{shown}: the file', [f'exit {want[0]}: {want[2][-300:]!r}'])
                continue
            # A FIFO of the same name: the same bytes, the name included.
            fifo_dir = tempfile.mkdtemp(dir=tmp)
            fed = {name: inputs[name]}
            if 'IN2' in args:
                fed['copy_' + name] = inputs[name]
            got = outputs(through_fifo(binary, given, fifo_dir, list(fed), fed), fifo_dir, out)
            c.report(f'{shown}: a FIFO gives the bytes the file gives',
                     [] if got == want else [f'exit {got[0]}, {got[2][-300:]!r}, stdout {len(got[1])} vs '
                                             f'{len(want[1])} bytes, output {len(got[3])} vs {len(want[3])} bytes'])
            # Standard input, '-' and /dev/stdin, and process substitution: the same but for the
            # input's name, which these give as '<stdin>', /dev/stdin and /dev/fd/N.
            if 'IN2' in args or out is not None:
                continue
            for way in ('-', '/dev/stdin', 'process substitution'):
                if way == '-' and len([x for x in args if x not in ('IN',) and not x.startswith('-')]) > 1:
                    continue  # '-' is one input of one
                if way == 'process substitution':
                    line = ' '.join(f"'{x}'" for x in [binary] + given).replace(f"'{name}'", f'<(cat {name})')
                    r = subprocess.run(['bash', '-c', line], cwd=files, capture_output=True)
                else:
                    r = run(binary, [way if x == name else x for x in given], files, stdin_bytes=inputs[name])
                names = [b'<stdin>', b'/dev/stdin'] + re.findall(rb'/dev/fd/\d+|/proc/self/fd/\d+', r.stdout)
                text = r.stdout
                for n in names:
                    text = text.replace(n, name.encode())
                ok = r.returncode == 0 and text == want[1]
                c.report(f'{shown}: {way} gives what the file gives (but its name)',
                         [] if ok else [f'exit {r.returncode}: {r.stderr[-300:]!r}, {len(text)} vs {len(want[1])}'])

        # Errors: one line that says what the input is and what the command reads.
        pickle0 = os.path.join(files, 'p0.pickle')
        pickle.dump({'segments': [], 'device_traces': []}, open(pickle0, 'wb'), protocol=0)
        keyavg = os.path.join(files, 'lm_train.key_averages.json')
        shutil.copy(os.path.join(real, 'lm_train.key_averages.json'), keyavg)
        cases = [
            (['summarize', 'in.pickle.gz', '-o', 's.summary.json'], 'in.pickle.gz: a memory snapshot: summarize reads'),
            (['compare', 'in.summary.json', 'in.summary.json'],
             'in.summary.json: a rank summary: compare reads two traces or two memory snapshots'),
            (['compare', 'in.pb.gz', 'in.json'], 'in.pb.gz: a pprof profile: compare reads two traces or two memory'),
            (['compare', 'in.json', 'in.pickle.gz'],
             'in.pickle.gz: a memory snapshot compares with a memory snapshot, not with a trace', 2),
            (['analyze', pickle0], 'p0.pickle: a pickle of protocol 0 (text): memory snapshots are pickles of '
                                   'protocol 2 to 5'),
            (['analyze', keyavg], "lm_train.key_averages.json: torch's key_averages() table, not a trace"),
            (['analyze', 'in.pb.gz'], 'in.pb.gz: a pprof profile: analyze reads'),
            (['convert', 'in.summary.json', 'o.pb.gz'], 'in.summary.json: a rank summary: convert reads'),
            (['convert', '-o', 'o.pb.gz', 'in.pickle.gz', 'in.json'], 'in.pickle.gz: a memory snapshot converts alone'),
        ]
        for args, want, *status in cases:
            # A kind the command never reads is bad input (1); a pair of kinds that are each
            # fine alone is a usage error (2), as docs/reference.md says.
            r = run(binary, args, files)
            err = r.stderr.decode()
            ok = (r.returncode == (status or [1])[0] and err.count('\n') == 1 and err.startswith('torch2pprof: ') and want in err
                  and not os.path.exists(os.path.join(files, 'o.pb.gz')) and not r.stdout)
            c.report(f'{" ".join(args[:1] + [os.path.basename(x) for x in args[1:]])}: one line naming what it is',
                     [] if ok else [f'exit {r.returncode}: {err!r}'])
        # A snapshot and a summary through standard input work as files do.
        r = run(binary, ['analyze', '-'], files, stdin_bytes=inputs['in.pickle.gz'])
        c.report('a memory snapshot on standard input is analysed',
                 [] if r.returncode == 0 and b'CUDA memory snapshot' in r.stdout else [r.stderr[-300:]])

        bounded_checks(c, binary, tmp)
    return c.summary()


def bounded_checks(c, binary, tmp):
    """Merge and reduce inputs made to cost more than their size: memory stays within a small
    multiple of the uncompressed input, or the file is refused with one line naming the cap.
    Under AddressSanitizer (its shadow memory and quarantine) only the outcomes are checked."""
    global peak_rss_mb
    if 'ASAN_OPTIONS' in os.environ:
        measured = peak_rss_mb
        peak_rss_mb = lambda args: (measured(args)[0], 0)  # noqa: E731
    other = os.path.join(tmp, 'files', 'other.json')
    head = profile_head()
    sample = field(2, 2, field(1, 2, b'\x01') + field(2, 0, varint(5)))
    # A stack 20 and 50 million frames deep (20 and 50 MB of message): kept to --max-depth.
    for depth in (20, 50):
        path = os.path.join(tmp, f'deep{depth}.pb.gz')
        write_gz(path, head, b'', 0, field(2, 2, field(1, 2, b'\x01' * (depth << 20)) + field(2, 0, varint(5))))
        r, rss = peak_rss_mb([binary, 'convert', '-o', os.path.join(tmp, 'm.pb.gz'), path, other])
        ok = r.returncode == 0 and rss < 3 * depth + 120 and b'deeper than 2048 frames' in r.stderr
        c.report(f'a profile with a {depth}M-frame stack: read in {rss:.0f} MiB, folded at --max-depth',
                 [] if ok else [f'exit {r.returncode}, {rss:.0f} MiB: {r.stderr[-300:]!r}'])
    # 100 million empty strings, or 10 million copies of one sample, in a few hundred KB:
    # refused once the inflation passes its cap, in little memory.
    for what, chunk, n in (('100M strings', field(6, 2, b'') * 100000, 1000), ('10M samples', sample * 100000, 100)):
        path = os.path.join(tmp, 'bomb.pb.gz')
        write_gz(path, head, chunk, n, sample)
        r, rss = peak_rss_mb([binary, 'convert', '-o', os.path.join(tmp, 'm.pb.gz'), path, other])
        err = r.stderr.decode()
        ok = (r.returncode == 1 and rss < 300 and err.count('\n') == 1 and
              'inflates more than 256 times its size' in err)
        c.report(f'a {os.path.getsize(path) // 1024} KB profile of {what}: refused, naming the cap ({rss:.0f} MiB)',
                 [] if ok else [f'exit {r.returncode}, {rss:.0f} MiB: {err!r}'])
    # The same, not gzipped: read in memory near its size, the copies one sample.
    path = os.path.join(tmp, 'samples.pb')
    with open(path, 'wb') as f:
        f.write(head + sample * 4000000)
    r, rss = peak_rss_mb([binary, 'convert', '-o', os.path.join(tmp, 'm.pb.gz'), path, other])
    size = os.path.getsize(path) / (1 << 20)
    c.report(f'a {size:.0f} MiB profile of 4M copies of one sample: {rss:.0f} MiB',
             [] if r.returncode == 0 and rss < 2 * size + 120 else [f'exit {r.returncode}, {rss:.0f} MiB'])
    # A summary of 0.5M and 2M collective calls (wall-clock starts, as a trace with
    # baseTimeNanoseconds gives): memory follows its calls, never a tree of the JSON.
    summary = json.load(open(os.path.join(tmp, 'files', 'in.summary.json')))
    summary['collectives'] = [{'name': 'c', 'kind': 'host', 'calls': 1, 'total_ns': 7}]
    for calls in (500000, 2000000):
        path = os.path.join(tmp, f'calls{calls}.summary.json')
        summary['calls'] = [[0, 1790857026000000000 + 10 * k, 1000 + k % 1000] for k in range(calls)]
        with open(path, 'w') as f:
            json.dump(summary, f, separators=(',', ':'))
        r, rss = peak_rss_mb([binary, 'analyze', '--format', 'json', path])
        size = os.path.getsize(path) / (1 << 20)
        c.report(f'a {size:.0f} MiB summary of {calls} calls: {rss:.0f} MiB',
                 [] if r.returncode == 0 and rss < 4 * size + 60 else [f'exit {r.returncode}, {rss:.0f} MiB: '
                                                                       f'{r.stderr[-300:]!r}'])

    # Summaries made to cost more than their size, gzipped: an unread key holding arrays
    # nested 100 million deep, a 512 MiB key, a gigabyte of white space. Each is refused in
    # one line naming its cap, in bounded memory, before it is read whole.
    head = b'{"torch2pprof_summary":1,'
    mib = 1 << 20
    hostile = [  # (what, the parts written in turn: (bytes, times), the cap named)
        ('arrays nested 100 million deep', [(head + b'"x":', 1), (b'[' * mib, 100)], 'nested deeper than 512'),
        ('a 512 MiB key', [(head + b'"', 1), (b'k' * mib, 512), (b'":1}', 1)], 'a key longer than 4096 bytes'),
        ('a gigabyte of white space', [(head, 1), (b' ' * mib, 1024), (b'}', 1)], 'inflates more than 256 times'),
    ]
    for what, parts, message in hostile:
        path = os.path.join(tmp, 'hostile.summary.json.gz')
        with gzip.open(path, 'wb', compresslevel=6) as f:
            for chunk, times in parts:
                for _ in range(times):
                    f.write(chunk)
        r, rss = peak_rss_mb([binary, 'analyze', '--format', 'json', path])
        err = r.stderr.decode(errors='replace') if isinstance(r.stderr, bytes) else r.stderr
        ok = r.returncode == 1 and rss < 100 and err.count('\n') == 1 and message in err
        c.report(f'a {os.path.getsize(path) // 1024} KB summary of {what}: refused in {rss:.0f} MiB, naming the cap',
                 [] if ok else [f'exit {r.returncode}, {rss:.0f} MiB: {err[-300:]!r}'])


if __name__ == '__main__':
    sys.exit(main())
