#!/usr/bin/env python3
"""The include rules, kept: each folder of src/ says in its README which folders and files
it may include ("May include: `base/`, `model/`, the public headers."), and every
#include "..." in that folder's sources must be one of them, its own folder, or the
standard library. docs/design.md draws the same arrows from these lines.

Phrases understood: `folder/` (any header there), `folder/file.h` (that one),
`include/torch2pprof/x.h` (that public header), "the public headers" (include/torch2pprof/,
stages/ too), "the public API" (include/torch2pprof/ but not stages/), "every stage".
A README without the line, or a phrase this script does not know, fails too: the rule
must be readable before it can be kept.

What it reads, so that no spelling slips past: every .h and .cc under src/ (subfolders
count as their stage: src/report/x/y.cc is report's), both #include "x" and #include <x>
(an include whose first part is a folder of src/ is internal, however it is spelled), and
the public headers under include/, which may include only public headers and the standard
library. And the grants themselves: a folder may be granted only folders below it in the
order docs/design.md draws (ORDER here; the test checks the drawing lists the same
folders), so no two READMEs can grant a loop."""
import glob
import os
import re
import sys

KNOWN = ('the public headers', 'the public api', 'every stage', 'the standard library')
# From the bottom: a folder may include only folders of a lower rank (docs/design.md).
ORDER = {'base': 0, 'load': 1, 'model': 2, 'convert': 3, 'write': 3, 'report': 3, 'analysis': 4, 'api': 5, 'cli': 6,
         'python': 7}


def rules(readme):
    text = open(readme, encoding='utf-8').read()
    m = re.search(r'May include:?\s*(.*?)(?:\n\n|\Z)', text, re.S)
    if not m:
        return None, f'{readme}: no "May include:" line'
    line = ' '.join(m.group(1).split())
    # The line ends at its first full stop outside backticks and parentheses.
    depth, tick, end = 0, False, len(line)
    for i, ch in enumerate(line):
        tick ^= ch == '`'
        depth += (ch == '(') - (ch == ')')
        if ch == '.' and not tick and depth == 0 and (i + 1 == len(line) or line[i + 1] == ' '):
            end = i
            break
    line = line[:end]
    allowed = {'prefixes': [], 'files': set(), 'all': False, 'public': None}
    bare = re.sub(r'\([^)]*\)', '', line)  # reasons in parentheses say why, they grant nothing
    for tok in re.findall(r'`([^`]+)`', bare):
        tok = tok.removeprefix('include/')
        if tok.endswith('/'):
            allowed['prefixes'].append(tok)
        else:
            allowed['files'].add(tok)
    words = re.sub(r'`[^`]+`', '', bare).lower()
    if 'the public headers' in words:
        allowed['public'] = 'headers'
    elif 'the public api' in words:
        allowed['public'] = 'api'
    if 'every stage' in words:
        allowed['all'] = True
    rest = words
    for k in KNOWN:
        rest = rest.replace(k, '')
    rest = re.sub(r'\b(and|only|,|may|include|its|own)\b', ' ', rest)
    if rest.strip(' ,'):
        return None, f'{readme}: "May include" has words this check does not know: {rest.strip()!r}'
    return allowed, None


def permitted(folder, inc, allowed):
    if inc.startswith(folder + '/'):
        return True
    if allowed['all']:
        return True
    if inc in allowed['files']:
        return True
    if any(inc.startswith(p) for p in allowed['prefixes']):
        return True
    if inc.startswith('torch2pprof/'):
        if allowed['public'] == 'headers':
            return True
        if allowed['public'] == 'api':
            return not inc.startswith('torch2pprof/stages/')
    return False


def includes(path):
    """(line, the included name, internal?) of each #include, "x" or <x>."""
    for n, line in enumerate(open(path, encoding='utf-8', errors='replace'), 1):
        m = re.match(r'\s*#\s*include\s+([<"])([^>"]+)[>"]', line)
        if m:
            yield n, m.group(2), m.group(1)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    src = os.path.join(root, 'src')
    folders = sorted(f for f in os.listdir(src) if os.path.isdir(os.path.join(src, f)))
    problems, checked = [], 0
    for folder in folders:
        if folder not in ORDER:
            problems.append(f'src/{folder}: not in the order of tests/layering/layering.py (docs/design.md)')
    design = open(os.path.join(root, 'docs', 'design.md'), encoding='utf-8').read()
    drawn = set(re.findall(r'^\s*([a-z]+) [─▶]', design, re.M))
    if drawn != set(ORDER):
        problems.append(f'docs/design.md draws {sorted(drawn)}, the order holds {sorted(ORDER)}')
    for folder in folders:
        d = os.path.join(src, folder)
        allowed, err = rules(os.path.join(d, 'README.md')) if os.path.exists(os.path.join(d, 'README.md')) \
            else (None, f'src/{folder}: no README.md')
        if err:
            problems.append(err)
            continue
        # The grants: only folders below this one.
        rank = ORDER.get(folder, 0)
        for grant in allowed['prefixes'] + sorted(allowed['files']):
            top = grant.split('/')[0]
            if top in ORDER and top != folder and ORDER[top] >= rank:
                problems.append(f'src/{folder}/README.md grants `{grant}`, which is not below {folder} in the order')
        files = sorted(glob.glob(d + '/**/*.h', recursive=True) + glob.glob(d + '/**/*.cc', recursive=True))
        for f in files:
            for n, inc, kind in includes(f):
                internal = inc.split('/')[0] in folders or kind == '"'
                if not internal:
                    continue  # the standard library and other libraries
                checked += 1
                if allowed['all'] and inc.split('/')[0] in ORDER and ORDER[inc.split('/')[0]] >= rank \
                        and not inc.startswith(folder + '/'):
                    problems.append(f'{os.path.relpath(f, root)}:{n}: includes "{inc}", above {folder} in the order')
                elif not permitted(folder, inc, allowed):
                    problems.append(f'{os.path.relpath(f, root)}:{n}: includes {"<%s>" % inc if kind == "<" else repr(inc)}, '
                                    f'against src/{folder}/README.md\'s "May include"')
    # The public headers: public headers and the standard library only.
    for f in sorted(glob.glob(os.path.join(root, 'include', '**', '*.h'), recursive=True)):
        for n, inc, kind in includes(f):
            if inc.split('/')[0] in folders or (kind == '"' and not inc.startswith('torch2pprof/')):
                checked += 1
                problems.append(f'{os.path.relpath(f, root)}:{n}: a public header includes "{inc}", not public')
            elif inc.startswith('torch2pprof/'):
                checked += 1
    for p in problems:
        print('FAIL', p)
    print(f'{checked} includes checked, {len(problems)} against the rules')
    return 1 if problems or checked == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
