#!/usr/bin/env python3
"""The guards fail on what they promise to catch: each violation of the review's tables
(../shared/docs/code-review.md, section 3) injected into a scratch copy of the tree, one at
a time, and layering.py or one_meaning.py run on it must fail, naming the file; the copy
as it is must pass, and so must the injections that are no violation (a rule's text in a
comment).

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

# one_meaning.py: (what, file, line appended), each a second rule or a second list.
MEANING = [
    ('a device name by hand', 'src/analysis/memory.cc', 'auto d = "cuda:" + std::to_string(i);'),
    ('a device name from its type', 'src/analysis/memory.cc', 'auto d = std::string("cuda") + ":" + std::to_string(i);'),
    ('a label key in a Label', 'src/convert/aggregator.cc', 'l.push_back(Label{"rank", "", r, true});'),
    ('a label key in braces', 'src/convert/aggregator.cc', 'v.push_back({"rank", "", r, true});'),
    ('a second list of CSV tables', 'src/report/snapshot_report.cc',
     'const char* kNames[] = {"devices", "peak_sites", "timeline"};'),
    ('gzip magic by index', 'src/write/output_file.cc', 'bool gz = b[0] == 0x1f;'),
    ('gzip magic in capitals', 'src/write/output_file.cc', 'bool gz = b[0] == 0x1F;'),
    ('gzip magic as a string', 'src/write/output_file.cc', 'bool gz = b.substr(0, 2) == "\\x1f\\x8b";'),
    ('a median by size()', 'src/analysis/ranks.cc', 'auto m = v[v.size() / 2];'),
    ('a median by n', 'src/analysis/ranks.cc', 'auto m = v[n / 2];'),
    ('a step name compared', 'src/analysis/memory.cc', 'bool s = n.rfind("ProfilerStep#", 0) == 0;'),
    ('a category compared', 'src/analysis/memory.cc', 'bool c = cat == "gpu_memcpy";'),
    ('the commonest categories compared', 'src/analysis/memory.cc', 'bool k = c == "kernel" || c == "cpu_op";'),
    ('a second list of sample types', 'src/analysis/memory.cc', 'const char* kTypes[] = {"gpu", "critical", "work"};'),
    ('a second list of finding ids', 'src/report/html_report.cc',
     'const char* kIds[] = {"sleep", "warmup", "dataloader"};'),
    ('a JSON escape by hand', 'src/analysis/timeline_trace.cc', r'std::snprintf(b, sizeof b, "\\u%04x", c);'),
    ('a JSON escape appended', 'src/load/summary_file.cc', r'o += "\\u00";'),
    ('a CSV table check by hand', 'src/cli/analyze_command.cc', 'throw Usage("--table must be one of " + names);'),
]
# long_functions.py: a function of 101 lines with no reason above it.
LONG = [('a function over 100 lines without a reason', 'src/base/long_extra.cc',
         'namespace torch2pprof {\nint Long() {\n' + '  int x = 0;\n' * 99 + '  return x;\n}\n}  // namespace torch2pprof\n')]
# Appended, these are no violation: one_meaning.py must still pass.
NOT_MEANING = [
    ('a rule\'s text in a block comment', 'src/cli/analyze_command.cc',
     '/* CheckCsvTable says "--table must be one of ..." */'),
    ('a rule\'s text in a line comment', 'src/analysis/memory.cc', '// never "cuda:" + n: DeviceName'),
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


def run(root, guard='layering.py'):
    return subprocess.run([sys.executable, os.path.join(HERE, guard), root], capture_output=True, text=True)


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, '..', '..')
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, 'clean')
        for part in ('src', 'include', 'docs'):
            shutil.copytree(os.path.join(source, part), os.path.join(clean, part))
        for guard in ('layering.py', 'one_meaning.py', 'long_functions.py'):
            r = run(clean, guard)
            if r.returncode:
                print(f'FAIL the copy as it is, {guard}: {r.stdout.strip()[-300:]}')
                failed += 1
            else:
                print(f'ok   the copy as it is passes {guard}')
                passed += 1
        cases = [(what, path, change, 'layering.py', True) for what, path, change in INJECTIONS]
        cases += [(what, path, '\n' + line + '\n', 'one_meaning.py', True) for what, path, line in MEANING]
        cases += [(what, path, '\n' + line + '\n', 'one_meaning.py', False) for what, path, line in NOT_MEANING]
        cases += [(what, path, text, 'long_functions.py', True) for what, path, text in LONG]
        cases += [('the same function with its reason', 'src/base/long_extra.cc',
                   LONG[0][2].replace('int Long', '// Over 100 lines: a test of the guard.\nint Long'),
                   'long_functions.py', False)]
        for what, path, change, guard, violation in cases:
            scratch = os.path.join(tmp, 'scratch')
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(clean, scratch)
            inject(scratch, path, change)
            r = run(scratch, guard)
            named = os.path.dirname(path) in r.stdout or path in r.stdout
            if not violation and r.returncode == 0:
                print(f'ok   {what}: passes {guard}, as it should')
                passed += 1
            elif violation and r.returncode and named:
                print(f'ok   {what}: caught by {guard}')
                passed += 1
            else:
                print(f'FAIL {what}: exit {r.returncode}, {r.stdout.strip()[-200:]}')
                failed += 1
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
