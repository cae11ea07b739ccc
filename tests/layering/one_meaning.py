#!/usr/bin/env python3
"""Meaning is decided once (docs/design.md, "Rules the code keeps"): for each fact two
outputs share, the code that decides it is named, and a second rule for it in src/ fails
here. Each rule is a pattern that only its deciding file may contain: a device name put
together by hand, a label key spelled as a string, a category or step name compared as
text, a frame name's address rule, a CSV table list, a gzip magic check."""
import glob
import os
import re
import sys

# (the fact, the pattern a second rule would contain, the files that decide it)
RULES = [
    ('a device\'s name: DeviceName (model/trace_model.cc)',
     r'"(cuda|mtia|hip|xpu):"', {'src/model/trace_model.cc'}),
    ('a label key: label_key:: in include/torch2pprof/profile.h',
     r'Label\{"|Find\(labels, "|\.key\s*[!=]=\s*"(pid|tid|thread|rank|step|device|stream)"|OrNumberLabel\("', set()),
    ('a category\'s role: RoleOfCategory (load/trace.cc)',
     r'"(cuda_runtime|cuda_driver|gpu_memcpy|gpu_memset|python_function|user_annotation|gpu_user_annotation)"',
     {'src/load/trace.cc'}),
    ('which step an instant is in: StepNumber, StepAt, DeviceStepOf (model/trace_model.cc)',
     r'"ProfilerStep#"', {'src/model/trace_model.cc'}),
    ('a frame\'s name without its address: FrameName (model/frame_names.cc)', r'" at 0x"',
     {'src/model/frame_names.cc'}),
    ('the CSV tables: one registry per report (report/table.h), one check (CheckCsvTable, report/table.cc)',
     r'--table must be one of', {'src/report/table.cc'}),
    ('gzip by its magic: IsGzip (base/gzip.h); the inflater also checks each next member',
     r'[!=]=\s*0x1f\b', {'src/base/gzip.h', 'src/load/byte_source.cc'}),
    ('which analysed step an event counts in: AnalysedHostStep, AnalysedDeviceStep (analysis/steps.cc) over '
     'the model\'s StepAt and DeviceStepOf, which convert\'s step labels read too',
     r'\b(StepAt|DeviceStepOf)\(', {'src/analysis/steps.cc', 'src/convert/fold.cc', 'src/convert/attribution.cc',
                                     'src/model/'}),
    ('a median or percentile rank: NearestRankIndex (analysis/statistics.h)',
     r'size\(\)\s*/\s*2\s*\]|\*\s*0\.(5|9|99)\s*\)', {'src/analysis/statistics.cc', 'src/analysis/statistics.h'}),
]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    files = sorted(glob.glob(os.path.join(root, 'src', '**', '*.cc'), recursive=True) +
                   glob.glob(os.path.join(root, 'src', '**', '*.h'), recursive=True))
    problems, deciding = [], {}
    for fact, pattern, owners in RULES:
        rx = re.compile(pattern)
        for f in files:
            rel = os.path.relpath(f, root)
            for n, line in enumerate(open(f, encoding='utf-8'), 1):
                code = line.split('//')[0] if '"' not in line.split('//')[0] else line
                if line.lstrip().startswith('//') or not rx.search(code):
                    continue
                if rel in owners or any(o.endswith('/') and rel.startswith(o) for o in owners):
                    deciding[fact] = deciding.get(fact, 0) + 1
                else:
                    problems.append(f'{rel}:{n}: a second rule for {fact}: {line.strip()[:120]}')
        for o in owners:
            if not os.path.exists(os.path.join(root, o)):  # a folder's owner ends in '/'
                problems.append(f'{fact}: its deciding file {o} is gone')
    for p in problems:
        print('FAIL', p)
    print(f'{len(RULES)} facts, {len(problems)} second rules')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
