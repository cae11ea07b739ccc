#!/usr/bin/env python3
"""Meaning is decided once (docs/design.md, "Rules the code keeps"): for each fact two
outputs share, the code that decides it is named, and a second rule for it in src/ fails
here. Each rule is a pattern that only its deciding file may contain: a device name put
together by hand, a label key spelled as a string, a category or step name compared as
text, a frame name's address rule, a gzip magic check, a median's index; and for the
facts that are lists (CSV tables, sample types, finding ids), a second list of their
names anywhere but in the registry. Comments are stripped first, so a rule's text in a
comment is no rule; what each pattern catches is listed in docs/design.md."""
import glob
import os
import re
import sys

# (the fact, the pattern a second rule would contain, the files that decide it)
RULES = [
    # "cuda:" + n, and std::string("cuda") + ":" + n: a device type alone as a literal.
    ('a device\'s name: DeviceName (model/trace_model.cc)',
     r'"(cuda|mtia|hip|xpu):"|"(cuda|mtia|hip|xpu)"\s*\)?\s*\+|\+\s*"(cuda|mtia|hip|xpu)"',
     {'src/model/trace_model.cc'}),
    # Label{"rank", ...}, a Label's braces {"rank", "", r, true} pushed or emplaced,
    # Find(labels, "rank"), l.key == "rank".
    ('a label key: label_key:: in include/torch2pprof/profile.h',
     r'Label\{"|Find\(labels, "|\.key\s*[!=]=\s*"(pid|tid|thread|rank|step|device|stream)"|OrNumberLabel\("'
     r'|\{\s*"(pid|tid|thread|rank|step|device|stream|step_number|kind)"\s*,\s*"[^"]*"\s*,\s*[^,{}]+,\s*(true|false)\s*\}',
     set()),
    # A category compared or listed as text, the commonest two included.
    ('a category\'s role: RoleOfCategory (load/trace.cc)',
     r'"(cuda_runtime|cuda_driver|gpu_memcpy|gpu_memset|python_function|user_annotation|gpu_user_annotation)"'
     r'|[!=]=\s*"(kernel|cpu_op|Kernel|Memcpy|Memset|Runtime)"',
     {'src/load/trace.cc'}),
    ('which step an instant is in: StepNumber, StepAt, DeviceStepOf (model/trace_model.cc)',
     r'"ProfilerStep#"', {'src/model/trace_model.cc'}),
    ('a frame\'s name without its address: FrameName (model/frame_names.cc)', r'" at 0x"',
     {'src/model/frame_names.cc'}),
    ('the CSV tables: one registry per report (report/table.h), one check (CheckCsvTable, report/table.cc)',
     r'--table must be one of', {'src/report/table.cc'}),
    # b[0] == 0x1f or 0x1F, either side; "\x1f\x8b" compared or memcmp'd; 0x8b1f.
    ('gzip by its magic: IsGzip (base/gzip.h); the inflater also checks each next member',
     r'[!=]=\s*0[xX]1[fF]\b|\b0[xX]1[fF]\s*[!=]=|[!=]=\s*"\\x1[fF]\\x8[bB]|\\x1[fF]\\x8[bB]"\s*[!=]='
     r'|memcmp\([^;]*\\x1[fF]\\x8[bB]|0[xX]8[bB]1[fF]', {'src/base/gzip.h', 'src/load/byte_source.cc'}),
    ('which analysed step an event counts in: AnalysedHostStep, AnalysedDeviceStep (analysis/steps.cc) over '
     'the model\'s StepAt and DeviceStepOf, which convert\'s step labels read too',
     r'\b(StepAt|DeviceStepOf)\(', {'src/analysis/steps.cc', 'src/convert/fold.cc', 'src/convert/attribution.cc',
                                     'src/model/', 'include/torch2pprof/stages/trace_model.h'}),
    # v[v.size() / 2], v[n / 2], v[(n - 1) / 2], v.size() * 0.9.
    ('a median or percentile rank: NearestRankIndex (analysis/statistics.h)',
     r'size\(\)\s*/\s*2\s*\]|\[\s*\(?\s*\w+(\s*-\s*1)?\s*\)?\s*/\s*2\s*\]|\*\s*0\.(5|9|99)\s*\)',
     {'src/analysis/statistics.cc', 'src/analysis/statistics.h'}),
    # "\\u%04x" formatted, or "\\u00" and a hex digit appended: a JSON escaper by hand.
    ('a name written as a JSON string: AppendJsonString (base/utf8.cc); the repair rules of broken input '
     'escape what they keep of it',
     r'"\\\\u%04x"|"\\\\u00"', {'src/base/utf8.cc', 'src/load/json_repair.cc'}),
]

# The facts that are lists: where their names are registered (the file, and the pattern
# whose first group is a name there). A braced list elsewhere holding two or more of them
# is a second list.
LISTS = [
    ('the CSV tables and analyze\'s views',
     ['src/report/analysis_report.cc', 'src/report/ranks_report.cc', 'src/report/snapshot_report.cc'],
     r'^\s*\{"([a-z_]+)",\s*(?:\[\]|$)|TableView<[^>]*>\("([a-z_]+)"'),
    ('the sample types (kTraceSampleTypes, kSnapshotSampleTypes)', ['include/torch2pprof/profile.h'],
     r'\{"([a-z_]+)", "(?:count|nanoseconds|bytes)"[,}]'),
    ('the finding ids (kFindingIds, kRankFindingIds)', ['include/torch2pprof/analysis.h', 'include/torch2pprof/ranks.h'],
     r'"([a-z_0-9]+)"'),
]
# A line that matches a rule's pattern and is no such rule says so, with why, in a comment
# holding this text: "// one_meaning: not a median (a hash's middle byte)".
EXEMPT = 'one_meaning: not '
# The finding ids' registries are the arrays that hold them, and only those.
LIST_SCOPES = {'the finding ids (kFindingIds, kRankFindingIds)': r'k(Rank)?FindingIds\[\] = \{(.*?)\};'}



def strip_comments(text):
    """The text with its comments blanked (newlines kept), strings and characters intact."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(')' + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(text[i:j])
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def registered(root):
    """Each list fact's names, read from its registry."""
    names = {}
    for fact, files, pattern in LISTS:
        got = set()
        for f in files:
            text = strip_comments(open(os.path.join(root, f), encoding='utf-8').read())
            if fact in LIST_SCOPES:
                text = ' '.join(m.group(2) for m in re.finditer(LIST_SCOPES[fact], text, re.S))
            for m in re.findall(pattern, text, re.M):
                got |= {g for g in (m if isinstance(m, tuple) else (m,)) if g}
        names[fact] = (got, set(files))
    return names


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    files = sorted(glob.glob(os.path.join(root, 'src', '**', '*.cc'), recursive=True) +
                   glob.glob(os.path.join(root, 'src', '**', '*.h'), recursive=True) +
                   glob.glob(os.path.join(root, 'include', '**', '*.h'), recursive=True))
    originals = {os.path.relpath(f, root): open(f, encoding='utf-8').read() for f in files}
    texts = {rel: strip_comments(text) for rel, text in originals.items()}
    originals = {rel: text.split('\n') for rel, text in originals.items()}
    problems = []
    for fact, pattern, owners in RULES:
        rx = re.compile(pattern)
        for rel, text in texts.items():
            if rel in owners or any(o.endswith('/') and rel.startswith(o) for o in owners):
                continue
            for n, line in enumerate(text.split('\n'), 1):
                if rx.search(line) and EXEMPT not in originals[rel][n - 1]:
                    problems.append(f'{rel}:{n}: a second rule for {fact}: {line.strip()[:120]}')
        for o in owners:
            if not os.path.exists(os.path.join(root, o)):  # a folder's owner ends in '/'
                problems.append(f'{fact}: its deciding file {o} is gone')
    lists = registered(root)
    literal_list = re.compile(r'\{\s*"[^"\n]*"(?:\s*,\s*"[^"\n]*")+\s*,?\s*\}')
    for fact, (names, owners) in lists.items():
        if len(names) < 3:
            problems.append(f'{fact}: its registry holds {sorted(names)}; the pattern no longer reads it')
        for rel, text in texts.items():
            # The CSV registries' entries hold their writers, so no list of bare names is
            # one of them, even in their own files; the other registries are such lists.
            if rel in owners and fact != LISTS[0][0]:
                continue
            for m in literal_list.finditer(text):
                literals = re.findall(r'"([^"\n]*)"', m.group(0))
                held = set(literals) & names
                # Two names, and most of the list: a list of other things that shares a
                # word or two with it (JSON fields, another registry) is not one.
                if len(held) >= 2 and 2 * len(held) >= len(literals):
                    n = text.count('\n', 0, m.start()) + 1
                    problems.append(f'{rel}:{n}: a second list of {fact}: {m.group(0)[:120]}')
    for p in problems:
        print('FAIL', p)
    print(f'{len(RULES)} facts and {len(LISTS)} lists ({sum(len(v[0]) for v in lists.values())} names), '
          f'{len(problems)} second rules')
    return 1 if problems else 0

if __name__ == '__main__':
    sys.exit(main())
