#!/usr/bin/env python3
"""The include rules, kept: each folder of src/ says in its README which folders and files
it may include ("May include: `base/`, `model/`, the public headers."), and every
#include "..." in that folder's sources must be one of them, its own folder, or the
standard library. docs/design.md draws the same arrows from these lines.

Phrases understood: `folder/` (any header there), `folder/file.h` (that one),
`include/torch2pprof/x.h` (that public header), "the public headers" (include/torch2pprof/,
stages/ too), "the public API" (include/torch2pprof/ but not stages/), "every stage".
A README without the line, or a phrase this script does not know, fails too: the rule
must be readable before it can be kept."""
import glob
import os
import re
import sys

KNOWN = ('the public headers', 'the public api', 'every stage', 'the standard library')


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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    src = os.path.join(root, 'src')
    problems, checked = [], 0
    for folder in sorted(os.listdir(src)):
        d = os.path.join(src, folder)
        if not os.path.isdir(d):
            continue
        allowed, err = rules(os.path.join(d, 'README.md')) if os.path.exists(os.path.join(d, 'README.md')) \
            else (None, f'src/{folder}: no README.md')
        if err:
            problems.append(err)
            continue
        for f in sorted(glob.glob(d + '/*.h') + glob.glob(d + '/*.cc')):
            for n, line in enumerate(open(f, encoding='utf-8'), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                checked += 1
                if not permitted(folder, m.group(1), allowed):
                    problems.append(f'{os.path.relpath(f, root)}:{n}: includes "{m.group(1)}", '
                                    f'against src/{folder}/README.md\'s "May include"')
    for p in problems:
        print('FAIL', p)
    print(f'{checked} includes checked, {len(problems)} against the rules')
    return 1 if problems or checked == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
