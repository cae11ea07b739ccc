#!/usr/bin/env python3
"""The lists a user reads outside --help say what the binary does: the CSV tables that
analyze --help offers (the report's one registry) are exactly those the bash completion
offers for --table and those the man page names; each of them is written by the binary.
The same for the sample types convert --help lists (profile.h's registry): the completion
offers them, the man page and docs/reference.md name each, and the profiles convert
writes of a trace and of a snapshot hold exactly them. The same for the finding ids
analyze --help lists (analysis.h's and ranks.h's registries) and docs/reference.md."""
import argparse
import json
import os
import re
import subprocess
import sys


def help_lists(binary):
    out = subprocess.run([binary, 'analyze', '--help'], capture_output=True, text=True, check=True).stdout
    out = ' '.join(out.split())
    lists = []
    for start, end in (('With --format csv: ', ' (default operators)'), ('several ranks: ', ' (default ranks)'),
                       ('a memory snapshot: ', ' (default devices)')):
        b = out.find(start) + len(start)
        e = out.find(end, b)
        lists.append(out[b:e].split(', ') if b >= len(start) and e >= 0 else [])
    return lists


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--source', required=True)
    a = ap.parse_args()
    problems = []
    lists = help_lists(a.binary)
    tables = [t for lst in lists for t in lst]
    if len(tables) < 25:
        problems.append(f'analyze --help offers only {len(tables)} tables: {tables}')
    comp = open(os.path.join(a.source, 'completion', 'torch2pprof.bash')).read()
    m = re.search(r'--table \| -table\)\s*(?:#[^\n]*\n\s*)?COMPREPLY=\(\$\(compgen -W "([^"]*)"', comp)
    offered = m.group(1).split() if m else []
    if sorted(offered) != sorted(tables):
        problems.append(f'bash completion: missing {sorted(set(tables) - set(offered))}, '
                        f'extra {sorted(set(offered) - set(tables))}')
    man = open(os.path.join(a.source, 'docs', 'torch2pprof.1')).read()
    m = re.search(r'\.BI \\-\\-table " NAME"\n(.*?)\n\.TP', man, re.S)
    para = re.sub(r'\\-', '-', m.group(1)) if m else ''
    named = set(re.findall(r'[a-z_]+', para))
    missing = [t for t in tables if t not in named]
    if missing:
        problems.append(f'man page --table: missing {missing}')
    trace = os.path.join(a.source, 'testdata', 'real', 'torch211', 'lm_train.pt.trace.json.gz')
    for t in lists[0]:
        r = subprocess.run([a.binary, 'analyze', '--format', 'csv', '--table', t, trace], capture_output=True,
                           text=True)
        if r.returncode != 0 or not r.stdout.strip():
            problems.append(f'--table {t}: exit {r.returncode}: {r.stderr.strip()[:200]}')
    # Sample types: convert --help's two lists (a trace's; a memory snapshot's).
    out = ' '.join(subprocess.run([a.binary, 'convert', '--help'], capture_output=True, text=True,
                                  check=True).stdout.split())
    m = re.search(r"A trace's: (.*?); a memory snapshot's: (.*?)(?: --|$)", out)
    trace_types = m.group(1).split(', ') if m else []
    snapshot_types = m.group(2).split(', ') if m else []
    types = sorted(set(trace_types) | set(snapshot_types))
    if len(trace_types) < 9 or len(snapshot_types) < 6:
        problems.append(f'convert --help lists sample types {trace_types} and {snapshot_types}')
    m = re.search(r'--sample-type\)\s*COMPREPLY=\(\$\(compgen -W "([^"]*)"', comp)
    if sorted(m.group(1).split() if m else []) != types:
        problems.append(f'bash completion --sample-type: {m.group(1) if m else None}, --help {types}')
    m = re.search(r'\.BI \\-\\-sample\\-type " TYPE"\n(.*?)\n\.TP', man, re.S)
    para = set(re.findall(r'[a-z_]+', m.group(1) if m else ''))
    if [t for t in types if t not in para]:
        problems.append(f'man page --sample-type: missing {[t for t in types if t not in para]}')
    reference = open(os.path.join(a.source, 'docs', 'reference.md')).read()
    if [t for t in types if f'`{t}`' not in reference]:
        problems.append(f'docs/reference.md: missing {[t for t in types if f"`{t}`" not in reference]}')
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = os.path.join(a.source, 'testdata', 'snapshots', 'oom_train.pickle.gz')
        for source, want in ((trace, trace_types), (snapshot, snapshot_types)):
            out_pb = os.path.join(tmp, 'p.pb.gz')
            subprocess.run([a.binary, 'convert', '--quiet', '--critical', source, out_pb], check=True)
            r = subprocess.run(['go', 'tool', 'pprof', '-raw', out_pb], capture_output=True, text=True, check=True)
            m = re.search(r'Samples:\n(.*?)\n', r.stdout)
            got = [x.split('/')[0] for x in m.group(1).split()] if m else []
            if got != want:
                problems.append(f'{os.path.basename(source)}: the profile holds {got}, --help says {want}')
    # Finding ids: analyze --help lists the registry's (kFindingIds, kRankFindingIds);
    # docs/reference.md's table has a row for each and no other, its JSON line names each,
    # and the ids the binary writes on the test traces are among them.
    out = ' '.join(subprocess.run([a.binary, 'analyze', '--help'], capture_output=True, text=True,
                                  check=True).stdout.split())
    m = re.search(r"Findings \(JSON's recommendations\[\]\.id\): (.*?); several ranks: (.*?)\.", out)
    findings = m.group(1).split(', ') if m else []
    rank_findings = m.group(2).split(', ') if m else []
    if len(findings) < 15 or len(rank_findings) < 3:
        problems.append(f'analyze --help lists findings {findings} and {rank_findings}')
    m = re.search(r'\| id \| evidence it quotes \| remedy \|\n\|[-|]*\|\n(.*?)\n\n', reference, re.S)
    rows = re.findall(r'^\| `([a-z_0-9]+)` \|', m.group(1) if m else '', re.M)
    if sorted(rows) != sorted(findings):
        problems.append(f'docs/reference.md findings table: missing {sorted(set(findings) - set(rows))}, '
                        f'extra {sorted(set(rows) - set(findings))}')
    m = re.search(r'^\| `recommendations` \| \[\{`id` \((.*?)\)', reference, re.M)
    named = re.findall(r'`([a-z_0-9]+)`', m.group(1) if m else '')
    if sorted(named) != sorted(findings):
        problems.append(f'docs/reference.md recommendations JSON: missing {sorted(set(findings) - set(named))}, '
                        f'extra {sorted(set(named) - set(findings))}')
    m = re.search(r'\*\*Several ranks\*\* \(`analyze rank\*\.json`\):(.*?)\n\n', reference, re.S)
    named = re.findall(r'`([a-z_]+)` —', m.group(1) if m else '')
    if sorted(named) != sorted(rank_findings):
        problems.append(f'docs/reference.md several ranks: {named}, --help {rank_findings}')
    written = set()
    for name in ('lm_train', 'resnet50_dl', 'multistream', 'decode_loop'):
        j = subprocess.run([a.binary, 'analyze', '--quiet', '--format', 'json',
                            os.path.join(a.source, 'testdata', 'real', 'torch211', name + '.pt.trace.json.gz')],
                           capture_output=True, text=True, check=True).stdout
        written |= {r['id'] for r in json.loads(j)['recommendations']}
    if not written or written - set(findings):
        problems.append(f'analyze writes findings {sorted(written)}, --help lists {findings}')
    # Defaults: each number --help gives as an option's default (constants the structs read)
    # is the one the man page gives for that option; each report's default CSV table is
    # the one the man page marks.
    defaults = 0
    paragraphs = {}
    for m in re.finditer(r'\.BI? (\\-\\-[a-z\\-]+)[^\n]*\n(.*?)(?=\n\.(?:TP|SH))', man, re.S):
        paragraphs.setdefault(m.group(1).replace('\\-', '-'), []).append(m.group(2))
    for command in ('convert', 'analyze', 'compare', 'summarize'):
        out = subprocess.run([a.binary, command, '--help'], capture_output=True, text=True, check=True).stdout
        joined = re.sub(r'\n\s{20,}', ' ', out)
        for m in re.finditer(r'^\s+(--[a-z-]+)\b[^\n]*\(default (\d+)[;)]', joined, re.M):
            option, value = m.group(1), m.group(2)
            defaults += 1
            said = [re.search(r'default:? (\d+)', re.sub(r'\s+', ' ', p)) for p in paragraphs.get(option, [])]
            said = [x.group(1) for x in said if x]
            if not said or any(x != value for x in said):
                problems.append(f'{command} --help: {option} default {value}; the man page says {said or "none"}')
    m = re.search(r'\.BI \\-\\-table " NAME"\n(.*?)\n\.TP', man, re.S)
    marked = re.findall(r'([a-z_]+) \(default\)', re.sub(r'\s+', ' ', m.group(1)) if m else '')
    out = ' '.join(subprocess.run([a.binary, 'analyze', '--help'], capture_output=True, text=True,
                                  check=True).stdout.split())
    said = re.findall(r'\(default ([a-z_]+)\)', out)
    if sorted(marked) != sorted(said) or len(said) != 3:
        problems.append(f'default tables: --help {said}, the man page {marked}')
    for p in problems:
        print('FAIL', p)
    print(f'{len(tables)} tables, {len(types)} sample types, {len(findings) + len(rank_findings)} findings and '
          f'{defaults} defaults checked, {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
