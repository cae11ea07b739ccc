#!/usr/bin/env python3
"""The guards fail on what they promise to catch: each violation of the review's tables
(../shared/docs/code-review.md) injected into a scratch copy of the tree, one at a time,
and layering.py run on it must fail, naming the file; the copy as it is must pass.

Prints one line per injection and 'N passed, N failed' last."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (what, file, text appended or (old, new) replaced): each one a violation.
INJECTIONS = [
    ('an internal header in angle brackets', 'src/report/format.cc', '\n#include <convert/aggregator.h>\n'),
    ('a file in a subfolder of a stage', 'src/report/sub/extra.cc', '#include "analysis/analyzer.h"\n'),
    ('a public header including a stage', 'include/torch2pprof/report.h', '\n#include "model/frame_names.h"\n'),
    ('a public header including an internal header <>', 'include/torch2pprof/analysis.h',
     '\n#include <base/executor.h>\n'),
    ('a grant up the order (a loop)', 'src/model/README.md', ('May include: `base/`', 'May include: `analysis/`, `base/`')),
    ('a stage including one above it', 'src/load/input.cc', '\n#include "model/trace_model.h"\n'),
    ('a folder the order does not know', 'src/extra/README.md', 'May include: `base/`.\n'),
]


def inject(root, path, change):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    if isinstance(change, tuple):
        text = open(full, encoding='utf-8').read()
        assert change[0] in text, (path, change[0])
        open(full, 'w', encoding='utf-8').write(text.replace(change[0], change[1], 1))
    else:
        with open(full, 'a', encoding='utf-8') as f:
            f.write(change)


def run(root):
    return subprocess.run([sys.executable, os.path.join(HERE, 'layering.py'), root], capture_output=True, text=True)


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, '..', '..')
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, 'clean')
        for part in ('src', 'include', 'docs'):
            shutil.copytree(os.path.join(source, part), os.path.join(clean, part))
        r = run(clean)
        if r.returncode:
            print(f'FAIL the copy as it is: {r.stdout.strip()[-300:]}')
            failed += 1
        else:
            print('ok   the copy as it is passes')
            passed += 1
        for what, path, change in INJECTIONS:
            scratch = os.path.join(tmp, 'scratch')
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(clean, scratch)
            inject(scratch, path, change)
            r = run(scratch)
            named = os.path.dirname(path) in r.stdout or path in r.stdout
            if r.returncode and named:
                print(f'ok   {what}: caught')
                passed += 1
            else:
                print(f'FAIL {what}: exit {r.returncode}, {r.stdout.strip()[-200:]}')
                failed += 1
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
