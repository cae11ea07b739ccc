#!/usr/bin/env python3
"""The error contract, end to end: every file in tests/bad_inputs/ run through the
real binary, with its exit status and stderr asserted; output problems (/dev/full,
an unwritable directory, the input as output); SIGINT in the middle of a
conversion; byte-identical output for any thread count.

Contract: exit 0 success, 1 bad input, 2 usage, 3 output not written; each error
is one line 'torch2pprof: FILE: [byte N: ]message' on stderr; nothing on stdout; no
output file unless the exit status is 0.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402

# file, extra args, exit status, stderr lines (regular expressions, after 'torch2pprof: ')
CASES = [
    ('not_json.json', [], 1, [r"not_json\.json: byte 0: expected '\{' or '\[' at the start of a Chrome trace, found 'h'"]),
    ('empty.json', [], 1, [r'empty\.json: byte 0: the input is empty: expected a JSON trace']),
    ('no_trace_events.json', [], 1, [r'no_trace_events\.json: not a Chrome trace: the JSON object has no "traceEvents" array']),
    ('no_timed_events.json', [], 1, [r'no_timed_events\.json: the trace has no timed events .* among its 1 events']),
    ('truncated.json', [], 1, [r'truncated\.json: byte 452: the trace is truncated: the input ends inside traceEvents after 4 events \(--allow-truncated keeps the events before the cut\)']),
    ('truncated.json', ['--allow-truncated'], 0,
     [r'truncated\.json: byte 452: warning: the trace is truncated; kept the 4 complete events before the cut']),
    ('truncated.json.gz', [], 1, [r'truncated\.json\.gz: byte 13781[45]: gzip stream is truncated: the compressed file ends after 4043 bytes, inside the data \(--allow-truncated keeps the events before the cut\)']),
    ('truncated.json.gz', ['--allow-truncated'], 0,
     [r'truncated\.json\.gz: byte 13781[45]: warning: the trace is truncated; kept the 1471 complete events before the cut']),
    ('bad_gzip_tail.json.gz', [], 1, [r'bad_gzip_tail\.json\.gz: byte \d+: corrupt gzip data: CRC mismatch']),
    ('trailing_data.json', [], 1, [r"trailing_data\.json: byte 92: unexpected data after the end of the trace: 'I'"]),
    ('unescaped_quote.json', [], 0, [r'unescaped_quote\.json: warning: repaired and kept 1 events with broken JSON .*']),
    ('unescaped_quote.json', ['--strict'], 1, [r'unescaped_quote\.json: byte 92: invalid JSON in an event \(--strict\)']),
    ('control_chars.json', [], 0, [r'control_chars\.json: warning: repaired and kept 1 events .*']),
    ('control_chars.json', ['--strict'], 1, [r'control_chars\.json: byte 92: invalid JSON in an event \(--strict\)']),
    ('lone_backslash.json', [], 0, [r'lone_backslash\.json: warning: repaired and kept 1 events .*']),
    ('invalid_utf8.json', [], 0, [r'invalid_utf8\.json: warning: repaired and kept 1 events .*']),
    ('bare_na.json', [], 0, []),  # N/A and NaN where nothing is read from them: read lazily, no harm
    ('big_integer.json', [], 0, []),  # integers beyond 64 bits in args: kept, unread or read as doubles
    ('log_text.json', [], 0,
     [r'log_text\.json: warning: skipped 1 unreadable events or text \(garbage 1\) at bytes 109; --strict makes this an error']),
    ('log_text.json', ['--strict'], 1,
     [r"log_text\.json: byte 109: expected an event in traceEvents, found 'S' \(--strict\)"]),
    ('missing_comma.json', [], 0, [r'missing_comma\.json: warning: skipped 1 unreadable events or text \(garbage 1\) at bytes 91;.*']),
    ('wrong_types.json', [], 0,
     [r'wrong_types\.json: warning: skipped 6 unreadable events or text \(bad_value 6\) at bytes 92, 165, 232, 305, 376, \.\.\.; --strict makes this an error']),
    ('wrong_types.json', ['--strict'], 1, [r'wrong_types\.json: byte 92: "ts" is not a number of microseconds \(--strict\)']),
    ('nan_values.json', [], 0, [r'nan_values\.json: warning: skipped 1 .*\(bad_value 1\) at bytes 160;.*', r'.*repaired and kept 1 events.*']),
    ('durations.json', [], 0, []),  # a negative dur carries no time (counted in the profile's comments)
    ('duplicate_keys.json', [], 0, []),  # the last value of a repeated key wins
    ('deep_args.json', [], 0, []),  # 3000-deep args are skipped unread
    ('not_an_event.json', [], 0, []),  # non-object elements are counted, not errors
    ('folded_broken.txt', [], 1,  # folded stacks (torch's export_stacks): a broken line is an error at its byte
     [r'folded_broken\.txt: byte 41: expected an integer value after the last space of a line of folded stacks']),
]


class Checks(Tally):
    def __init__(self, binary, tmp):
        super().__init__()
        self.binary, self.tmp = binary, tmp

    def run(self, args, **kw):
        return subprocess.run([self.binary] + args, capture_output=True, text=True, errors='replace', **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--inputs', required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        c = Checks(a.binary, tmp)
        os.chdir(a.inputs)  # messages name files as given
        for name, extra, status, pattern in CASES:
            for threads in ('1', '2'):
                out = os.path.join(tmp, f'out-{threads}.pb.gz')
                r = c.run(['convert', '--threads', threads] + extra + [name, out])
                problems = []
                if r.returncode != status:
                    problems.append(f'exit {r.returncode}, want {status}')
                lines = r.stderr.splitlines()
                if len(lines) != len(pattern) or not all(
                        re.fullmatch('torch2pprof: ' + p, line) for p, line in zip(pattern, lines)):
                    problems.append(f'stderr {r.stderr!r}')
                if r.stdout:
                    problems.append('stdout is not empty')
                if (status == 0) != os.path.exists(out):
                    problems.append('an output file exists' if status else 'no output file')
                if status == 0 and threads == '2' and open(out, 'rb').read() != open(
                        os.path.join(tmp, 'out-1.pb.gz'), 'rb').read():
                    problems.append('--threads 2 output differs from --threads 1')
                if status == 0:
                    g = subprocess.run(['go', 'tool', 'pprof', '-raw', out], capture_output=True, text=True)
                    if g.returncode != 0:
                        problems.append('go tool pprof cannot read the output')
                c.report(f'{name} {" ".join(extra)} threads={threads}'.replace('  ', ' '), problems)
            for f in os.listdir(tmp):
                os.remove(os.path.join(tmp, f))
        output_checks(c, tmp)
        sigint_check(c, tmp)
        return c.summary()


def output_checks(c, tmp):
    good = 'durations.json'
    r = c.run(['convert', good, '/dev/full'])
    c.report('/dev/full -> exit 3, device untouched',
             [] if r.returncode == 3 and 'No space left on device' in r.stderr and os.path.exists('/dev/full')
             and not os.path.isfile('/dev/full') else [f'exit {r.returncode}: {r.stderr}'])
    r = c.run(['convert', good, os.path.join(tmp, 'no', 'such', 'dir.pb.gz')])
    c.report('missing directory -> exit 3', [] if r.returncode == 3 else [f'exit {r.returncode}'])
    copy = os.path.join(tmp, 'input.pb.gz')  # a trace under a profile's name
    open(copy, 'w').write(open(good).read())
    before = open(copy).read()
    r = c.run(['convert', copy, copy])
    c.report('output over the input -> exit 3, input untouched',
             [] if r.returncode == 3 and open(copy).read() == before else [f'exit {r.returncode}'])
    existing = os.path.join(tmp, 'existing.pb.gz')
    open(existing, 'w').write('keep me')
    r = c.run(['convert', 'not_json.json', existing])
    c.report('failed conversion leaves an existing output alone',
             [] if r.returncode == 1 and open(existing).read() == 'keep me' else [f'exit {r.returncode}'])
    r = c.run(['convert', '--no-such-option', good, existing])
    c.report('usage error -> exit 2, one line', [] if r.returncode == 2 and r.stderr.count('\n') == 1 else [r.stderr])


def sigint_check(c, tmp):
    """SIGINT while the trace is still arriving: no output, no temporary file."""
    out = os.path.join(tmp, 'interrupted.pb.gz')
    p = subprocess.Popen([c.binary, 'convert', '-', out], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b'{"traceEvents": [' + b''.join(
        b'{"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": %d, "dur": 1},' % i for i in range(20000)))
    p.stdin.flush()
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=30)
    p.stdin.close()
    left = os.listdir(tmp)
    problems = []
    if p.returncode != -signal.SIGINT:
        problems.append(f'exit {p.returncode}, want death by SIGINT')
    if any(f.startswith('interrupted') or f.startswith('.interrupted') for f in left):
        problems.append(f'left behind: {left}')
    c.report('SIGINT mid-conversion leaves no output or temporary file', problems)


if __name__ == '__main__':
    sys.exit(main())
