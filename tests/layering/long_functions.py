#!/usr/bin/env python3
"""No function over 100 lines without a comment that says why (docs/design.md, "Rules the
code keeps"): every function body in src/ longer than LIMIT lines must follow a comment
whose text holds "Over 100 lines:" and the reason (one switch over a format's opcodes,
one pass whose parts share its state, ...). Prints each long function with its length;
fails on one without the reason."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_meaning import strip_comments  # noqa: E402

LIMIT = 100
MARK = 'Over 100 lines:'
# A line that may open a function's signature: not a statement, a declaration of data or
# a preprocessor line.
STATEMENT = re.compile(r'\s*(if|for|while|switch|else|do|return|case|default|try|catch|using|typedef|'
                       r'namespace|struct|class|union|enum|template|public|private|protected|#|\}|\{|//)\b')


def functions(text):
    """(first line, last line, name) of each function body in the comment-blanked text."""
    # Braces inside strings and characters ('{', "}") are no blocks.
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\\n])+'", "' '", text)
    lines = text.split('\n')
    out = []
    i = 0
    depth_at = []  # brace depth at the start of each line
    depth = 0
    for line in lines:
        depth_at.append(depth)
        depth += line.count('{') - line.count('}')
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'^(\s*)(?:[\w:<>,*&~\s]+?\s)?([\w:~]+)\s*\(', line)
        if m and not STATEMENT.match(line) and '=' not in line.split('(')[0] and ';' not in line.split('(')[0]:
            # The signature ends at the first '{' before any ';' (within 8 lines).
            j, sig_end = i, None
            while j < len(lines) and j < i + 8:
                code = lines[j]
                if ';' in code and '{' not in code:
                    break
                if code.rstrip().endswith('{') or re.search(r'\)\s*(const)?\s*(noexcept)?\s*(override)?\s*\{', code):
                    sig_end = j
                    break
                j += 1
            if sig_end is not None:
                d = depth_at[sig_end]
                # The body ends where the depth comes back to the signature's.
                k, depth_k = sig_end, d + lines[sig_end].count('{') - lines[sig_end].count('}')
                while depth_k > d and k + 1 < len(lines):
                    k += 1
                    depth_k += lines[k].count('{') - lines[k].count('}')
                out.append((i, k, m.group(2)))
                i = k + 1
                continue
        i += 1
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    problems, long_ones = [], 0
    for f in sorted(glob.glob(os.path.join(root, 'src', '**', '*.cc'), recursive=True) +
                    glob.glob(os.path.join(root, 'src', '**', '*.h'), recursive=True)):
        rel = os.path.relpath(f, root)
        original = open(f, encoding='utf-8').read()
        lines = original.split('\n')
        for first, last, name in functions(strip_comments(original)):
            n = last - first + 1
            if n <= LIMIT:
                continue
            long_ones += 1
            # The comment block right above the signature (blank lines and template lines allowed).
            k, comment = first - 1, []
            while k >= 0 and (lines[k].strip().startswith('//') or lines[k].strip().startswith('template')):
                comment.append(lines[k].strip().lstrip('/ '))
                k -= 1
            said = MARK in ' '.join(reversed(comment))
            print(f'{"ok  " if said else "FAIL"} {rel}:{first + 1}: {name}, {n} lines')
            if not said:
                problems.append(rel)
    print(f'{long_ones} functions over {LIMIT} lines, {len(problems)} without a reason')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
