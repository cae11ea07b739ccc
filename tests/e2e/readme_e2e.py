#!/usr/bin/env python3
"""Every `torch2pprof` command in the README's code blocks, run as written on real inputs.

Placeholders become files of testdata/ (trace.json.gz: lm_train; base and new: HTA's
compare pair; rank*.pt.trace.json.gz: the four late2 DDP ranks; snapshot.pickle and the
*.pickle pair: memory snapshots; stacks.txt: torch's export_stacks); outputs land in a temporary directory. Checked:
- each exits 0, or 4 where it gives --fail-on rules (a gate may fire), and a command that
  writes a file leaves it there;
- where the README shows a command's output (`$ torch2pprof ...` and the lines after
  it), each line it shows is in the output as shown (a line with `...` up to its first
  `...`): the README's numbers are the binary's.
The go tool pprof lines are convert_e2e's, the Python example wheel_e2e's.
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally  # noqa: E402


def blocks(text):
    return re.findall(r'```[a-z]*\n(.*?)```', text, re.S)


def commands(readme):
    """(command line, the output lines shown after it) for each torch2pprof command."""
    out = []
    for block in blocks(readme):
        lines = block.split('\n')
        for i, line in enumerate(lines):
            shown = line.startswith('$ torch2pprof ')
            if not (line.startswith('torch2pprof ') or shown):
                continue
            cmd = line[2:] if shown else line
            cmd = re.sub(r'\s+#.*$', '', cmd).strip()
            after = []
            if shown:
                for rest in lines[i + 1:]:
                    if rest.startswith('$ '):
                        break
                    after.append(rest)
            out.append((cmd, after))
    return out


def inputs(testdata, tmp):
    real = os.path.join(testdata, 'real')
    d = os.path.join(real, 'torch211')
    snaps = os.path.join(testdata, 'snapshots')
    files = {
        'trace.json.gz': os.path.join(d, 'lm_train.pt.trace.json.gz'),
        'base.json.gz': os.path.join(real, 'hta__trace_compare__base__base.json.gz'),
        'new.json.gz': os.path.join(real, 'hta__trace_compare__test__test.json.gz'),
        'base': os.path.join(real, 'hta__trace_compare__base__base.json.gz'),
        'new': os.path.join(real, 'hta__trace_compare__test__test.json.gz'),
        'snapshot.pickle': os.path.join(snaps, 'oom_train.pickle.gz'),
        'before.pickle': os.path.join(snaps, 'oom_train.pickle.gz'),
        'after.pickle': os.path.join(snaps, 'long_train.pickle.gz'),
        'stacks.txt': os.path.join(testdata, 'folded', 'export_stacks.txt'),
    }
    for name, src in files.items():
        shutil.copy(src, os.path.join(tmp, name))
    for r in range(4):
        shutil.copy(os.path.join(d, f'ddp_gloo_4ranks_late2_rank{r}.pt.trace.json.gz'),
                    os.path.join(tmp, f'rank{r}.pt.trace.json.gz'))
    os.makedirs(os.path.join(tmp, 'sum'))
    for r in range(4):
        subprocess.run([os.environ['T2P'], 'summarize', os.path.join(tmp, f'rank{r}.pt.trace.json.gz'), '-o',
                        os.path.join(tmp, 'sum', f'{r}.summary.json')], check=True)
    # The README's repository paths (testdata/...) resolve from the temporary directory.
    os.symlink(os.path.abspath(testdata), os.path.join(tmp, 'testdata'))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--readme', required=True)
    a = ap.parse_args()
    binary = os.path.abspath(a.binary)
    os.environ['T2P'] = binary
    c = Tally()
    readme = open(a.readme).read()
    # Its pictures are there (the e2e tests retake them; scripts/screenshots.sh copies them).
    pictures = re.findall(r'!\[[^\]]*\]\(([^)]+)\)', readme)
    missing = [p for p in pictures if not os.path.exists(os.path.join(os.path.dirname(a.readme), p))]
    c.report(f'README pictures ({len(pictures)})', [f'{m} missing' for m in missing])
    found = commands(readme)
    if len(found) < 15:
        c.report('README commands found', [f'only {len(found)}'])
    with tempfile.TemporaryDirectory() as tmp:
        inputs(a.testdata, tmp)
        os.environ['GITHUB_STEP_SUMMARY'] = os.path.join(tmp, 'summary.md')
        for cmd, shown in found:
            problems = []
            words = shlex.split(cmd.replace('$GITHUB_STEP_SUMMARY', os.environ['GITHUB_STEP_SUMMARY']),
                                comments=False)
            redirect = None
            if '>' in words or '>>' in words:
                k = words.index('>') if '>' in words else words.index('>>')
                redirect, words = (words[k + 1], words[k] == '>>'), words[:k]
            argv = [binary] + [x for w in words[1:] for x in (sorted(glob.glob(os.path.join(tmp, w)))
                                                              if '*' in w else [w])]
            r = subprocess.run(argv, cwd=tmp, capture_output=True)
            allowed = {0, 4} if '--fail-on' in words else {0}
            if r.returncode not in allowed:
                problems.append(f'exit {r.returncode}: {r.stderr.decode()[-300:]}')
            if redirect:
                with open(os.path.join(tmp, redirect[0]), 'ab' if redirect[1] else 'wb') as f:
                    f.write(r.stdout)
            for w in words[2:]:
                if re.search(r'\.(pb\.gz|folded|prof|summary\.json|html)$', w) and not w.startswith('-') \
                        and '*' not in w and not os.path.exists(os.path.join(tmp, w)) and w not in words[2:3]:
                    problems.append(f'{w} not written')
            text = r.stdout.decode()
            for line in shown:
                want = line.split('...')[0].rstrip() if '...' in line else line.rstrip()
                if want and want not in text:
                    problems.append(f'the README shows {want[:100]!r}, the command does not print it')
                    break
            c.report(f'README: {cmd[:110]}', problems)
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
