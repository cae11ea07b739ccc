#!/usr/bin/env python3
"""End-to-end tests of torch2pprof as people install and run it.

- install: `cmake --install` into a temporary prefix puts the command, headers, static
  library, package files, man page and bash completion where the README says; a
  separate project (tests/consumer/) finds it with find_package(torch2pprof), builds,
  and its Convert call writes the same bytes as the command, its Analyze the same steps
  as `analyze --format json`.
- man page: `man -l` renders it, and it documents every option of every command's
  --help, and no option --help lacks.
- bash completion: offers the commands, every option of each command's --help, and
  the values of --format.
- progress: on a terminal (under `script`) a slow input shows a progress line that is
  cleared at the end; piped, nothing, unless --progress; --quiet silences it.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402

COMMANDS = ('convert', 'analyze', 'compare', 'summarize')


def help_options(binary, command):
    """The long options a command's --help lists."""
    text = subprocess.run([binary, command, '--help'], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r'^\s+(?:-\w,)?(--[a-z][a-z-]*)', text, re.M))


def check_install(t, a, work):
    prefix = os.path.join(work, 'prefix')
    r = subprocess.run(['cmake', '--install', a.build, '--prefix', prefix], capture_output=True, text=True)
    if r.returncode:
        return t.report('cmake --install', [r.stderr[-400:]])
    want = ['bin/torch2pprof', 'include/torch2pprof/torch2pprof.h', 'include/torch2pprof/version.h',
            'lib/libtorch2pprof.a', 'lib/cmake/torch2pprof/torch2pprofConfig.cmake',
            'lib/cmake/torch2pprof/torch2pprofConfigVersion.cmake', 'lib/cmake/torch2pprof/torch2pprofTargets.cmake',
            'share/man/man1/torch2pprof.1', 'share/bash-completion/completions/torch2pprof']
    missing = [w for w in want if not os.path.exists(os.path.join(prefix, w))]
    t.report('cmake --install puts every file in place', [f'missing {m}' for m in missing])

    # The API is these headers and no others; each compiles on its own, and none shows the
    # mechanics behind it (allocators, hash indexes, scheduling hooks, the lane builder).
    inc = os.path.join(prefix, 'include')
    headers = sorted(os.path.relpath(os.path.join(r, f), inc) for r, _, fs in os.walk(inc) for f in fs)
    api = ['torch2pprof/analysis.h', 'torch2pprof/compare.h', 'torch2pprof/device_views.h', 'torch2pprof/error.h',
           'torch2pprof/events.h', 'torch2pprof/host_views.h', 'torch2pprof/input.h', 'torch2pprof/output.h',
           'torch2pprof/profile.h', 'torch2pprof/ranks.h', 'torch2pprof/report.h', 'torch2pprof/snapshot.h',
           'torch2pprof/stages/snapshot.h', 'torch2pprof/stages/trace.h', 'torch2pprof/stages/trace_loader.h',
           'torch2pprof/stages/trace_model.h',
           'torch2pprof/torch2pprof.h', 'torch2pprof/version.h']
    problems = [] if headers == api else [f'installed {headers}, want {api}']
    # Units a reader can hold: each public header under 400 lines (the results schema is
    # split by view: host_views.h, device_views.h, snapshot.h, ranks.h, compare.h).
    for h in headers:
        n = open(os.path.join(inc, h)).read().count('\n')
        if n >= 400:
            problems.append(f'{h} has {n} lines (400 at most)')
    for h in headers:
        text = open(os.path.join(inc, h)).read()
        problems += [f'{h} names {w}' for w in ('Allocator', 'StringIndex {', 'BuildLanes', 'LaneStacks', 'madvise')
                     if w in text]
        if h.startswith('torch2pprof/stages/') and 'no stability promise' not in text:
            problems.append(f'{h} does not say it carries no stability promise')
        r = subprocess.run(['c++', '-std=c++17', '-fsyntax-only', '-I', inc, '-x', 'c++', '-'],
                           input=f'#include <{h}>\n', capture_output=True, text=True)
        if r.returncode:
            problems.append(f'{h} does not compile alone: {r.stderr[:300]}')
    t.report('the installed headers are the API, each self-contained', problems)

    # Flags that build this project stay in it: nothing of -march, -W or -fsanitize in the package.
    with open(os.path.join(prefix, 'lib/cmake/torch2pprof/torch2pprofTargets.cmake')) as f:
        targets = f.read()
    leaked = [flag for flag in ('-march', '-Wall', '-fsanitize', 'torch2pprof_flags', 'nlohmann') if flag in targets]
    t.report('the exported target carries no build flags', [f'{x} in torch2pprofTargets.cmake' for x in leaked])

    # The consumer with the cmake on PATH and with the one that configured this build (pip's
    # CMake 4 refuses policy versions below 3.5, in a package's config files too).
    cmakes = [shutil.which('cmake')] + ([a.cmake] if a.cmake else [])
    seen = set()
    for cmake in cmakes:
        if not cmake or os.path.realpath(cmake) in seen:
            continue
        seen.add(os.path.realpath(cmake))
        version = subprocess.run([cmake, '--version'], capture_output=True, text=True).stdout.split('\n')[0]
        build = os.path.join(work, f'consumer-build-{len(seen)}')
        steps = [[cmake, '-S', os.path.join(a.source, 'tests', 'consumer'), '-B', build,
                  f'-DCMAKE_PREFIX_PATH={prefix}', '-DCMAKE_BUILD_TYPE=Release'],
                 [cmake, '--build', build, '-j2']]
        problems = []
        for step in steps:
            r = subprocess.run(step, capture_output=True, text=True)
            if r.returncode:
                problems = [f'{step[1]}: {(r.stdout + r.stderr)[-600:]}']
                break
        t.report(f'consumer builds with find_package(torch2pprof) ({version})', problems)
        if problems:
            return

    trace = os.path.join(a.source, 'testdata', 'real', 'torch211', 'lm_train.pt.trace.json.gz')
    mine, theirs = os.path.join(work, 'consumer.pb.gz'), os.path.join(work, 'cli.pb.gz')
    c = subprocess.run([os.path.join(build, 'consumer'), trace, mine], capture_output=True, text=True)
    subprocess.run([os.path.join(prefix, 'bin', 'torch2pprof'), 'convert', '--quiet', trace, theirs], check=True)
    problems = []
    if c.returncode:
        problems.append(f'consumer exit {c.returncode}: {c.stderr[-300:]}')
    elif open(mine, 'rb').read() != open(theirs, 'rb').read():
        problems.append('Convert() wrote other bytes than the command')
    j = json.loads(subprocess.run([a.binary, 'analyze', '--format', 'json', '-top', '0', trace], capture_output=True,
                                  text=True, check=True).stdout)
    want_steps = [f'{s["name"]} {round(float(s["total_us"]) * 1000)}' for s in j['steps']]
    got_steps = [line for line in c.stdout.split('\n') if line.startswith('ProfilerStep')]
    if got_steps != want_steps:
        problems.append(f'Analyze() steps {got_steps} != analyze --format json {want_steps}')
    if 'regressed 0 step_time>+5%: +0.0%' not in c.stdout:
        problems.append(f'Compare() of a run with itself: {c.stdout[-300:]!r}')
    events = [e for e in json.loads(gzip.decompress(open(trace, 'rb').read()))['traceEvents']
              if e.get('ph') == 'X' and float(e.get('dur', 0)) > 0 and e.get('cat') != 'Trace']
    if f'intervals {len(events)} steps {len(j["steps"])}' not in c.stdout:
        problems.append(f'LoadTrace/BuildModel: {c.stdout[-100:]!r}, want {len(events)} intervals')
    top = subprocess.run(['go', 'tool', 'pprof', '-top', mine], capture_output=True, text=True)
    if top.returncode or not top.stdout.startswith('File: lm_train.pt.trace.json.gz'):
        problems.append(f'go tool pprof -top: {top.stdout[:80]!r} {top.stderr[:200]}')
    t.report('consumer: Convert and Analyze agree with the command', problems)


def check_man(t, a):
    page = os.path.join(a.source, 'docs', 'torch2pprof.1')
    r = subprocess.run(['man', '-l', page], capture_output=True, text=True, env=dict(os.environ, MANPAGER='cat',
                                                                                     MANWIDTH='100'))
    rendered = r.stdout
    problems = [] if r.returncode == 0 and 'EXIT STATUS' in rendered else [f'man -l: exit {r.returncode} {r.stderr}']
    documented = set(re.findall(r'(--[a-z][a-z-]*)', rendered.replace('\u2010', '-').replace('\u2011', '-')))
    listed = set()
    for cmd in COMMANDS:
        opts = help_options(a.binary, cmd)
        listed |= opts
        problems += [f'{cmd} {o} is not in the man page' for o in sorted(opts - documented)]
    problems += [f'the man page documents {o}, which no --help lists' for o in sorted(documented - listed - {'--version'})]
    t.report('man page renders and matches --help', problems)


def complete(a, words):
    """What the completion script offers for the command line `words` (the last is being typed)."""
    script = os.path.join(a.source, 'completion', 'torch2pprof.bash')
    words_q = ' '.join("'" + w + "'" for w in words)
    cmd = (f'source {script}; COMP_WORDS=({words_q}); COMP_CWORD={len(words) - 1}; _torch2pprof; '
           'printf "%s\\n" "${COMPREPLY[@]}"; complete -p torch2pprof >&2')
    r = subprocess.run(['bash', '-c', cmd], capture_output=True, text=True)
    return set(r.stdout.split()), r.stderr


def check_completion(t, a):
    problems = []
    got, registered = complete(a, ['torch2pprof', ''])
    if got != {'convert', 'analyze', 'compare', 'summarize', 'help'}:
        problems.append(f'commands: {sorted(got)}')
    if '_torch2pprof' not in registered:
        problems.append(f'complete -p: {registered!r}')
    for cmd in COMMANDS:
        got, _ = complete(a, ['torch2pprof', cmd, '--'])
        missing = help_options(a.binary, cmd) - got
        problems += [f'{cmd}: {o} not offered' for o in sorted(missing)]
    formats = {'convert': {'pprof', 'folded', 'pstats'}, 'analyze': {'text', 'json', 'csv', 'html'},
               'compare': {'text', 'json', 'markdown', 'html'}}
    for cmd, want in formats.items():
        got, _ = complete(a, ['torch2pprof', cmd, '--format', ''])
        if got != want:
            problems.append(f'{cmd} --format: {sorted(got)}')
    got, _ = complete(a, ['torch2pprof', 'analyze', '--form'])
    if got != {'--format'}:
        problems.append(f'analyze --form: {sorted(got)}')
    t.report('bash completion offers commands, options and values', problems)


def check_progress(t, a, work):
    """A trace fed through a pipe that stalls for 1.5 s: progress shows meanwhile."""
    trace = os.path.join(a.source, 'testdata', 'real', 'torch211', 'lm_train.pt.trace.json.gz')
    size = os.path.getsize(trace)
    half = size // 2
    feed = f'(head -c {half} {trace}; sleep 1.5; tail -c +{half + 1} {trace})'
    cases = [  # (under a pty, extra args, progress expected)
        (True, [], True), (False, [], False), (False, ['--progress'], True), (True, ['--quiet'], False)]
    problems = []
    for pty, extra, want in cases:
        cmd = f'{feed} | {a.binary} analyze {" ".join(extra)} --format json - > {work}/out.json'
        if pty:
            log = os.path.join(work, 'typescript')
            r = subprocess.run(['script', '-qec', cmd, log], capture_output=True, stdin=subprocess.DEVNULL)
            err = open(log, 'rb').read()
        else:
            r = subprocess.run(['bash', '-c', cmd], capture_output=True)
            err = r.stderr
        err = err.decode(errors='replace')
        last = err.rfind('\rtorch2pprof: read and parse')
        name = f'{"pty" if pty else "pipe"} {" ".join(extra) or "(default)"}'
        if r.returncode:
            problems.append(f'{name}: exit {r.returncode} {r.stderr[-200:]}')
        elif (last >= 0) != want:
            problems.append(f'{name}: progress {"shown" if last >= 0 else "not shown"}: {err[-200:]!r}')
        elif last >= 0 and '\r\x1b[K' not in err[last + 1:]:
            problems.append(f'{name}: the progress line is not cleared at the end: {err[last:][-120:]!r}')
        elif last >= 0 and not re.search(r'read and parse  \d+(\.\d\d)? (B|[KMG]iB)  \d+(\.\d\d)? (B|[KMG]iB)/s  \d+\.\ds\x1b\[K', err[last:]):
            problems.append(f'{name}: no bytes, rate and time in {err[last:][:120]!r}')
    t.report('progress on a terminal or with --progress, never piped or with --quiet', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--build', required=True)
    ap.add_argument('--skip-install', action='store_true', help='sanitizer builds: a consumer cannot link them')
    ap.add_argument('--cmake', help='the cmake that configured this build: the consumer is built with it too')
    a = ap.parse_args()
    t = Tally()
    with tempfile.TemporaryDirectory() as work:
        checks = [lambda: check_man(t, a), lambda: check_completion(t, a), lambda: check_progress(t, a, work)]
        if not a.skip_install:
            checks.insert(0, lambda: check_install(t, a, work))
        for check in checks:
            try:
                check()
            except Exception as e:  # a crash of a check is a failure too
                t.report(getattr(check, '__name__', 'check'), [f'{type(e).__name__}: {e}'])
    return t.summary()


if __name__ == '__main__':
    sys.exit(main())
