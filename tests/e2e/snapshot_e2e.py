#!/usr/bin/env python3
"""End-to-end tests of convert on CUDA memory snapshots against an independent model.

The model reads each snapshot with Python's own pickle module and computes, per device
and per stack, what the profile must hold (docs/reference.md, "Memory snapshots"):
- alloc_space/alloc_objects: every `alloc` entry of the ring, by its stack;
- dump_space/dump_objects: each segment's blocks at the dump: an active block's bytes
  asked for (requested_size) under its stack, its rounding (size - requested_size) under
  the stack and a rounding frame, inactive blocks as cached free space, the segment's
  bytes in no block as such; the total is the segments' total_size;
- inuse_space/inuse_objects: the blocks live at the peak of allocated bytes, found by
  simulating the ring forwards (the converter replays it backwards from the dump): live
  at the start are the blocks active at the dump whose address the ring never allocates,
  and the blocks the ring frees before allocating their address (their stack is the
  free's, under a frame that says so); `alloc` adds a block, `free_completed` removes it;
  the peak is the first moment with the most bytes live.
A snapshot whose ring and segments disagree (the simulation frees what is not live, or
ends with other blocks than the dump's) must say so in a comment; its dump and
allocations are still exact.

Frames are hidden by the rules the converter documents (torch's _memory_viz
_frame_filter plus the allocator's and the interpreter's C API frames), written here
again from docs/reference.md. The profile is read back with `go tool pprof -raw`, and
the folded output (--sample-type each) must equal the profile's sums per stack.
"""
import argparse
import glob
import gzip
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_e2e import Raw  # noqa: E402
from e2e_common import Tally  # noqa: E402

ROUNDING = '[rounding to the block size]'
CACHED = '[cached free: inactive blocks]'
UNCOVERED = '[reserved, in no block]'
NO_STACK = '[no stack recorded]'
BEFORE_FREED = '[allocated before the recorded window; stack of its free]'

MEMVIZ_FUNCTIONS = ['unwind::unwind', 'CapturedTraceback::gather', 'gather_with_cpp', '_start',
                    '__libc_start_main', 'PyEval_', 'PyObject_', 'PyFunction_']
MEMVIZ_FILES = ['core/boxing', '/Register', '/Redispatch', 'pythonrun.c', 'Modules/main.c', 'Objects/call.c',
                'Objects/methodobject.c', 'pycore_ceval.h', 'ceval.c', 'cpython/abstract.h']


def python_frame(f):
    """Python code: a .py file and a line (CPython's C frames have lines too)."""
    return (f.get('line') or 0) > 0 and (f.get('filename') or '').endswith('.py')


def hidden(f):
    name, filename, line = f.get('name') or '', f.get('filename') or '', f.get('line') or 0
    if any(x in name for x in MEMVIZ_FUNCTIONS) or any(x in filename for x in MEMVIZ_FILES):
        return True
    if 'CachingAllocator::' in name or 'at::detail::empty' in name or 'at::detail::_empty' in name:
        return True
    if filename.startswith(('Register', 'Redispatch')):
        return True
    # The interpreter's C frames: CPython's source directories, and its C API by name.
    if filename.endswith(('.c', '.h')) and re.search(r'(^|/)(Objects|Python|Include|Modules|Parser)/', filename):
        return True
    if re.match(r'_Py|Py[A-Z_]', name) and not python_frame(f):
        return True
    return line == 0 and name.startswith('__libc_')


def short_path(path):
    """The path after the last site-packages/ (dist-packages/), as trace frames are named."""
    for marker in ('site-packages/', 'dist-packages/'):
        if marker in path:
            return path[path.rindex(marker) + len(marker):]
    return path


def backward_node(f):
    """'[backward] Node' for an autograd node's apply, else None."""
    n = without_parameters(f['name'])
    if f['name'].startswith('torch::autograd::') and n.endswith('::apply') and len(n) > len('::apply'):
        return '[backward] ' + n[:-len('::apply')].rsplit('::', 1)[-1]
    return None


def frame_name(f):
    """A frame as every output names it: a backward node as analyze's sites do."""
    node = backward_node(f)
    if node:
        return node
    line = f.get('line') or 0
    return f"{f['name']} {short_path(f['filename'])}:{line}" if line > 0 else f['name']


def stack(frames, root=None, leaf=None):
    s = [frame_name(f) for f in reversed(frames or []) if not hidden(f)]
    if not s and not root:
        s = [NO_STACK]
    return tuple(([root] if root else []) + s + ([leaf] if leaf else []))


def without_parameters(name):
    """A C++ name without its parameter list (which follows an identifier or a '>')."""
    if not name.endswith(')'):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        if name[i] == ')':
            depth += 1
        elif name[i] == '(':
            depth -= 1
            if depth == 0:
                return name[:i] if i > 0 and (name[i - 1].isalnum() or name[i - 1] in '_>') else name
    return name


def site(frames):
    """analyze's site of a stack (docs/reference.md): the innermost Python frame, else the
    backward node (an autograd node's apply), else the operator, else the innermost frame
    shown."""
    frames = frames or []
    for f in frames:
        if python_frame(f):
            return frame_name(f)
    for f in frames:
        node = backward_node(f)
        if node:
            return node
    for f in frames:
        if f['name'].startswith('at::_ops::') and '::call(' in f['name']:
            return without_parameters(f['name'])
    for f in frames:
        if not hidden(f):
            return without_parameters(f['name'])
    return NO_STACK


def load(path):
    with (gzip.open(path) if open(path, 'rb').read(2) == b'\x1f\x8b' else open(path, 'rb')) as f:
        return pickle.load(f)


def sites_of(live):
    out = defaultdict(lambda: [0, 0])
    for size, _, where in live.values():
        out[where][0] += size
        out[where][1] += 1
    return {k: tuple(v) for k, v in out.items()}


def segsum(s, device):
    """torch/cuda/_memory_viz.py segsum, ported: per segment, active_allocated blocks are
    allocated (their requested size, _block_extra) with their rounding as internal free;
    every other block is external free. Summed over the device's segments."""
    reserved = allocated = internal = external = 0
    for seg in s['segments']:
        if seg['device'] != device:
            continue
        reserved += seg['total_size']
        for b in seg['blocks']:
            if b['state'] == 'active_allocated':
                asked = b.get('requested_size', b['size'])
                if 'history' in b and b['history']:
                    asked = b['history'][0].get('real_size', asked)
                allocated += asked
                internal += b['size'] - asked
            else:
                external += b['size']
    return reserved, allocated, internal, external


def model(s):
    """{device: {type: {stack: value}}}, and the devices whose ring disagrees with the dump."""
    out = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    disagree = set()
    traces = s.get('device_traces') or []
    devices = sorted({seg['device'] for seg in s['segments']} | {d for d, t in enumerate(traces) if t})
    for seg in s['segments']:
        m = out[seg['device']]
        for b in seg['blocks']:
            if b['state'] in ('active_allocated', 'active_pending_free'):
                asked = min(b.get('requested_size', b['size']), b['size'])
                m['dump_space'][stack(b.get('frames'))] += asked
                m['dump_objects'][stack(b.get('frames'))] += 1
                if b['size'] > asked:
                    m['dump_space'][stack(b.get('frames'), leaf=ROUNDING)] += b['size'] - asked
            else:
                m['dump_space'][(CACHED,)] += b['size']
                m['dump_objects'][(CACHED,)] += 1
        rest = seg['total_size'] - sum(b['size'] for b in seg['blocks'])
        if rest > 0:
            m['dump_space'][(UNCOVERED,)] += rest
    for d in devices:
        m = out[d]
        ring = traces[d] if d < len(traces) else []
        for e in ring:
            if e['action'] == 'alloc':
                m['alloc_space'][stack(e.get('frames'))] += e['size']
                m['alloc_objects'][stack(e.get('frames'))] += 1
        # Forwards from what was live before the ring.
        allocated = {e['addr'] for e in ring if e['action'] == 'alloc'}
        dump = {}
        for seg in s['segments']:
            if seg['device'] != d:
                continue
            for b in seg['blocks']:
                if b['state'] in ('active_allocated', 'active_pending_free'):
                    dump[b['address']] = (min(b.get('requested_size', b['size']), b['size']), stack(b.get('frames')),
                                          site(b.get('frames')))
        live = {a: v for a, v in dump.items() if a not in allocated}
        seen = set()
        for e in ring:
            if e['action'] == 'alloc':
                seen.add(e['addr'])
            elif e['action'] == 'free_completed' and e['addr'] not in seen and e['addr'] not in live:
                live[e['addr']] = (e['size'], stack(e.get('frames'), leaf=BEFORE_FREED),
                                   '[before the window; freed at] ' + site(e.get('frames')))
        level = sum(v[0] for v in live.values())
        peak, at_peak = level, dict(live)
        from_ring, at_peak_ring = set(), set()  # the ring's own allocations, live
        ooms = []
        ok = True
        # Reserved bytes, replayed forwards from before the ring (for the OOMs' causes).
        change = {'segment_alloc': 1, 'segment_map': 1, 'segment_free': -1, 'segment_unmap': -1}
        held = sum(seg['total_size'] for seg in s['segments'] if seg['device'] == d)
        held -= sum(change.get(e['action'], 0) * e['size'] for e in ring)
        for e in ring:
            held += change.get(e['action'], 0) * e['size']
            if e['action'] == 'alloc':
                if e['addr'] in live:
                    ok = False
                live[e['addr']] = (e['size'], stack(e.get('frames')), site(e.get('frames')))
                from_ring.add(e['addr'])
                level += e['size']
            elif e['action'] == 'free_completed':
                if e['addr'] not in live or live[e['addr']][0] != e['size']:
                    ok = False
                level -= live.pop(e['addr'], (e['size'], None, None))[0]
                from_ring.discard(e['addr'])
            elif e['action'] == 'oom':
                # The device had less free than asked: full; more: the allocator's own limit.
                free = e.get('device_free')
                cause = None if free is None else 'device_full' if free < e['size'] else 'allocator_limit'
                ooms.append((e['size'], level, dict(live), held, cause, held - level >= e['size']))
                continue
            else:
                continue
            if level > peak:
                peak, at_peak, at_peak_ring = level, dict(live), set(from_ring)
        if {a: v[0] for a, v in live.items()} != {a: v[0] for a, v in dump.items()}:
            ok = False
        # Nor may the peak exceed the most ever reserved (replayed forwards from before the ring).
        change = {'segment_alloc': 1, 'segment_map': 1, 'segment_free': -1, 'segment_unmap': -1}
        reserved = sum(seg['total_size'] for seg in s['segments'] if seg['device'] == d)
        reserved -= sum(change.get(e['action'], 0) * e['size'] for e in ring)
        most = reserved
        for e in ring:
            reserved += change.get(e['action'], 0) * e['size']
            most = max(most, reserved)
        if peak > most:
            ok = False
        if not ok:
            disagree.add(d)
        for size, st, _ in at_peak.values():
            m['inuse_space'][st] += size
            m['inuse_objects'][st] += 1
        m['peak'] = peak
        m['peak_sites'] = sites_of(at_peak)
        m['peak_ring_sites'] = sites_of({a: at_peak[a] for a in at_peak_ring})
        m['ooms'] = [(size, lv, sites_of(lv_live), rest) for size, lv, lv_live, *rest in ooms]
    return out, disagree


def profile_sums(raw):
    """{device: {type: {stack: value}}} from go tool pprof -raw."""
    out = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    for smp in raw.samples:
        device = int(smp['labels']['device'].split(':')[1])
        # Python frames and the bracketed ones ("[backward] AccumulateGrad") by the name
        # pprof shows, other C++ frames by their system name (pprof shows them without the
        # parameter list).
        st = tuple(raw.locations[loc][0] if raw.locations[loc][2] > 0 or raw.locations[loc][0].startswith('[')
                   else raw.locations[loc][4] for loc in reversed(smp['stack']))
        for t in raw.types:
            v = raw.value(smp, t)
            if v:
                out[device][t][st] += v
    return out


def check(tally, binary, path, tmp):
    name = os.path.basename(path)
    out = os.path.join(tmp, name + '.pb.gz')
    r = subprocess.run([binary, 'convert', path, out], capture_output=True, text=True)
    if r.returncode != 0:
        return tally.report(name, [f'exit {r.returncode}: {r.stderr.strip()[:300]}'])
    raw = Raw(out)
    want, disagree = model(load(path))
    got = profile_sums(raw)
    problems = []
    if raw.default != 'inuse_space':
        problems.append(f'default sample type {raw.default}')
    s = load(path)
    for d, m in want.items():
        reserved = sum(seg['total_size'] for seg in s['segments'] if seg['device'] == d)
        if sum(got[d]['dump_space'].values()) != reserved:
            problems.append(f'device {d}: dump_space {sum(got[d]["dump_space"].values())} != reserved {reserved}')
        types = ['dump_space', 'dump_objects', 'alloc_space', 'alloc_objects']
        if d in disagree:
            if not any(f'device {d}: the ring and the segments disagree' in c for c in raw.comments):
                problems.append(f'device {d}: the ring disagrees with the dump, and no comment says so')
        else:
            types += ['inuse_space', 'inuse_objects']
            line = [c for c in raw.comments if c.startswith(f'device {d}: peak ')]
            if not line or f'peak {m["peak"]} bytes' not in line[0]:
                problems.append(f'device {d}: peak comment {line} != {m["peak"]}')
        for t in types:
            w = {k: v for k, v in m[t].items() if v}
            g = dict(got[d][t])
            if w != g:
                diff = sorted(set(w) ^ set(g) | {k for k in set(w) & set(g) if w[k] != g[k]}, key=str)
                problems.append(f'device {d} {t}: {len(diff)} stacks differ, e.g. {str(diff[0])[-200:]}: '
                                f'want {w.get(diff[0])} got {g.get(diff[0])}')
    problems += check_analyze(binary, path, s, want, disagree, tmp)
    # Folded stacks: the profile's sums per stack (root frames none: the stacks alone).
    for t in ['inuse_space', 'dump_space', 'alloc_objects']:
        folded = os.path.join(tmp, name + '.' + t + '.folded')
        r = subprocess.run([binary, 'convert', '--sample-type', t, '--folded-root', 'none', path, folded],
                           capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f'folded {t}: exit {r.returncode}: {r.stderr.strip()[:200]}')
            continue
        lines = defaultdict(int)
        for line in open(folded, encoding='utf-8'):
            st, _, v = line.rstrip('\n').rpartition(' ')
            lines[st] += int(v)
        expect = defaultdict(int)
        for d in got:
            for st, v in got[d][t].items():
                expect[';'.join(f.replace(';', ',').strip() for f in st)] += v
        if dict(lines) != {k: v for k, v in expect.items() if v}:
            problems.append(f'folded {t} differs from the profile')
    tally.report(name, problems)


def check_analyze(binary, path, s, want, disagree, tmp):
    """analyze --format json against segsum's port and the model's peak, sites and OOMs;
    --format csv and text run."""
    r = subprocess.run([binary, 'analyze', '--format', 'json', path], capture_output=True, text=True)
    if r.returncode != 0:
        return [f'analyze: exit {r.returncode}: {r.stderr.strip()[:200]}']
    doc = json.loads(r.stdout)
    problems = []
    devices = {d['device']: d for d in doc['devices']}
    if sorted(devices) != sorted(f'cuda:{d}' for d in want):
        problems.append(f'analyze devices {sorted(devices)}')
    for d, m in want.items():
        got = devices.get(f'cuda:{d}')
        if not got:
            continue
        reserved, allocated, internal, external = segsum(s, d)
        have = (got['reserved_bytes'], got['allocated_bytes'], got['rounding_bytes'],
                got['pending_free_bytes'] + got['free_bytes'])
        if have != (reserved, allocated, internal, external):
            problems.append(f'cuda:{d}: reserved, allocated, internal, external {have} != segsum\'s '
                            f'{(reserved, allocated, internal, external)}')
        if got['consistent'] == (d in disagree):
            problems.append(f'cuda:{d}: consistent {got["consistent"]}')
        if d in disagree:
            continue
        if got['peak_bytes'] != m['peak']:
            problems.append(f'cuda:{d}: peak {got["peak_bytes"]} != {m["peak"]}')
        sites = {row['site']: (row['bytes'], row['blocks']) for row in doc['peak_sites'] if row['device'] == f'cuda:{d}'}
        if sites != m['peak_sites']:
            diff = sorted(set(sites) ^ set(m['peak_sites']) | {k for k in sites if sites[k] != m['peak_sites'].get(k)})
            problems.append(f'cuda:{d}: peak sites differ, e.g. {diff[0]!r}: {sites.get(diff[0])} vs '
                            f'{m["peak_sites"].get(diff[0])}')
        # The site series (the HTML's memory over time by site): the 12 sites of the ring's
        # allocations holding most at the peak, each with the model's bytes there, and
        # with the others and what came before the window, the whole peak.
        series = {row['site']: row['peak_bytes'] for row in doc['site_series'] if row['device'] == f'cuda:{d}'}
        ring_sites = m['peak_ring_sites']
        top = sorted(ring_sites, key=lambda k: (-ring_sites[k][0], k))[:12]
        named = {k: v for k, v in series.items() if not k.startswith('[') or k in ring_sites}
        named.pop('[other sites]', None)
        named.pop('[allocated before the window]', None)
        if named != {k: ring_sites[k][0] for k in top if ring_sites[k][0]}:
            problems.append(f'cuda:{d}: site series {sorted(named.items())[:2]} != the model\'s top sites '
                            f'{[(k, ring_sites[k][0]) for k in top][:2]}')
        if sum(series.values()) != m['peak']:
            problems.append(f'cuda:{d}: the site series hold {sum(series.values())} at the peak, not {m["peak"]}')
        ooms = [o for o in doc['ooms'] if o['device'] == f'cuda:{d}']
        got_ooms = [(o['requested_bytes'], o['allocated_bytes'], [o['reserved_bytes'], o['cause'], o['fragmented']])
                    for o in ooms]
        if got_ooms != [(a, b, rest) for a, b, _, rest in m['ooms']]:
            problems.append(f'cuda:{d}: ooms {got_ooms} != {[(a, b, rest) for a, b, _, rest in m["ooms"]]}')
        for o, (_, _, live, _) in zip(ooms, m['ooms']):
            got_sites = {row['site']: (row['bytes'], row['blocks']) for row in doc['oom_sites']
                         if row['device'] == f'cuda:{d}' and row['oom_entry'] == o['entry']}
            if got_sites != live:
                problems.append(f'cuda:{d}: sites at the OOM of entry {o["entry"]} differ')
    for fmt in (['--format', 'csv', '--table', 'peak_sites'], ['--format', 'csv', '--table', 'timeline'],
                ['--format', 'csv', '--table', 'site_series'], []):
        r = subprocess.run([binary, 'analyze'] + fmt + [path], capture_output=True, text=True)
        if r.returncode != 0 or not r.stdout:
            problems.append(f'analyze {fmt}: exit {r.returncode}')
        if not fmt and any(len(line) > 120 for line in r.stdout.split('\n')):
            problems.append('analyze text: a line over 120 columns')
    return problems


def check_compare(tally, binary, base, new, tmp):
    """compare on two snapshots: the peaks and the change by site are the model's; a
    memory_peak gate fires exactly when the change crosses it (exit 4, else 0); -o writes
    a diff that go tool pprof reads, whose inuse_space sums to the change of the peaks."""
    problems = []
    mb, _ = model(load(base))
    mn, _ = model(load(new))
    peak_b, peak_n = max(m['peak'] for m in mb.values()), max(m['peak'] for m in mn.values())
    change = 100.0 * (peak_n - peak_b) / peak_b
    out = os.path.join(tmp, 'diff.pb.gz')
    for threshold, code in ((change - 1, 4), (change + 1, 0)):
        rule = f'memory_peak>{threshold:+.3f}%'
        r = subprocess.run([binary, 'compare', '--format', 'json', '--fail-on', rule, '-o', out, base, new],
                           capture_output=True, text=True)
        if r.returncode != code:
            problems.append(f'{rule}: exit {r.returncode}, want {code}: {r.stderr.strip()[:200]}')
            continue
        doc = json.loads(r.stdout)
        if [(d['base_peak_bytes'], d['new_peak_bytes']) for d in doc['devices']] != \
                [(mb[d]['peak'], mn[d]['peak']) for d in sorted(set(mb) | set(mn))]:
            problems.append(f'devices {doc["devices"]}')
        sites = defaultdict(lambda: [0, 0])
        for d, m in mb.items():
            for k, (b, _) in m['peak_sites'].items():
                sites[k][0] += b
        for d, m in mn.items():
            for k, (b, _) in m['peak_sites'].items():
                sites[k][1] += b
        want = {k: v for k, v in sites.items() if v[0] != v[1]}
        got = {x['site']: [x['base_bytes'], x['new_bytes']] for x in doc['sites']}
        if got != want:
            problems.append(f'sites differ: {len(got)} vs {len(want)}')
    raw = Raw(out)
    total = sum(raw.value(smp, 'inuse_space') for smp in raw.samples)
    if total != peak_n - peak_b:
        problems.append(f'the diff sums to {total}, the peaks changed by {peak_n - peak_b}')
    r = subprocess.run([binary, 'compare', '--fail-on', 'step_time>+5%', base, new], capture_output=True, text=True)
    if r.returncode != 2:
        problems.append(f'a step_time rule on snapshots: exit {r.returncode}')
    tally.report('compare two snapshots', problems)


def check_bad(tally, binary, tmp):
    """Opcodes outside plain data are refused with their offset, nothing written."""
    out = os.path.join(tmp, 'bad.pb.gz')
    cases = {
        'GLOBAL': b'\x80\x02c' + b'os\nsystem\n' + b'.',
        'REDUCE': b'\x80\x02]R.',
        'BUILD': b'\x80\x02}b.',
        'STACK_GLOBAL': b'\x80\x04\x8c\x02os\x8c\x06system\x93.',
        'INST': b'\x80\x02(ios\nsystem\n.',
        'OBJ': b'\x80\x02(o.',
    }
    for op, data in cases.items():
        path = os.path.join(tmp, op + '.pickle')
        open(path, 'wb').write(data)
        r = subprocess.run([binary, 'convert', path, out], capture_output=True, text=True)
        offset = data.index(bytes([{'GLOBAL': 0x63, 'REDUCE': 0x52, 'BUILD': 0x62, 'STACK_GLOBAL': 0x93,
                                    'INST': 0x69, 'OBJ': 0x6f}[op]]), 2)
        problems = []
        if r.returncode != 1:
            problems.append(f'exit {r.returncode}')
        if len(r.stderr.strip().split('\n')) != 1 or f'byte {offset}' not in r.stderr:
            problems.append(f'stderr {r.stderr.strip()[:200]!r} does not name byte {offset}')
        if os.path.exists(out):
            problems.append('an output was written')
        tally.report(f'refused {op}', problems)
    # A snapshot cut short: one line, exit 1.
    good = pickle.dumps({'segments': [], 'device_traces': [[{'action': 'alloc', 'addr': 1, 'size': 2}]]}, protocol=4)
    path = os.path.join(tmp, 'cut.pickle')
    open(path, 'wb').write(good[:len(good) // 2])
    r = subprocess.run([binary, 'convert', path, out], capture_output=True, text=True)
    tally.report('truncated snapshot', [] if r.returncode == 1 and len(r.stderr.strip().split('\n')) == 1
                 and not os.path.exists(out) else [f'exit {r.returncode}: {r.stderr.strip()[:200]}'])
    # pstats is for call times.
    r = subprocess.run([binary, 'convert', good_path(tmp, good), os.path.join(tmp, 'x.prof')], capture_output=True,
                       text=True)
    tally.report('pstats refused for a snapshot', [] if r.returncode == 2 else [f'exit {r.returncode}'])


def good_path(tmp, data):
    path = os.path.join(tmp, 'good.pickle')
    open(path, 'wb').write(data)
    return path


def check_made(tally, binary, tmp):
    """Hand-made snapshots, one rule each, in every protocol the reader takes."""
    fr = lambda name, line=0, filename='??': {'name': name, 'filename': filename, 'line': line}  # noqa: E731
    alloc_stack = [fr('c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long)'),
                   fr('at::empty'), fr('_PyObject_MakeTpCall'), fr('forward', 7, 'model.py'), fr('main', 3, 'train.py')]
    s = {
        'segments': [{'device': 1, 'address': 1000, 'total_size': 4096, 'stream': 0, 'segment_type': 'large',
                      'segment_pool_id': (0, 0), 'is_expandable': False, 'frames': [],
                      'blocks': [{'address': 1000, 'size': 1024, 'requested_size': 1000, 'state': 'active_allocated',
                                  'frames': alloc_stack},
                                 {'address': 2024, 'size': 2048, 'requested_size': 0, 'state': 'inactive',
                                  'frames': []}]}],
        'device_traces': [[], [
            {'action': 'free_completed', 'addr': 9000, 'size': 512, 'stream': 0, 'time_us': 1,
             'frames': [fr('zero_grad', 9, 'opt.py')]},
            {'action': 'alloc', 'addr': 1000, 'size': 1000, 'stream': 0, 'time_us': 2, 'frames': alloc_stack},
            {'action': 'alloc', 'addr': 5000, 'size': 3000, 'stream': 0, 'time_us': 3, 'frames': alloc_stack[1:]},
            {'action': 'free_requested', 'addr': 5000, 'size': 3000, 'stream': 0, 'time_us': 4, 'frames': []},
            {'action': 'free_completed', 'addr': 5000, 'size': 3000, 'stream': 0, 'time_us': 5, 'frames': []},
            {'action': 'oom', 'addr': 0, 'size': 1 << 30, 'stream': 0, 'time_us': 6, 'device_free': 12345,
             'frames': []},
        ]],
    }
    for proto in (2, 3, 4, 5):
        path = os.path.join(tmp, f'made_p{proto}.pickle')
        open(path, 'wb').write(pickle.dumps(s, protocol=proto))
        check(tally, binary, path, tmp)
    out = os.path.join(tmp, 'made.pb.gz')
    subprocess.run([binary, 'convert', path, out], check=True)
    raw = Raw(out)
    problems = []
    want = [f'device 1: peak {1000 + 3000} bytes after ring entry 2 (time_us 3)',
            'device 1: out of memory asking for 1073741824 bytes with 12345 bytes free on the device (time_us 6)']
    for w in want:
        if not any(c.startswith(w) for c in raw.comments):
            problems.append(f'no comment {w!r} in {raw.comments}')
    names = {v[0] for v in raw.locations.values()}
    if any('CachingAllocator' in n or n.startswith('_Py') for n in names):
        problems.append('allocator or interpreter frames shown')
    r = subprocess.run([binary, 'convert', '--all-frames', path, out], capture_output=True, text=True)
    if r.returncode != 0 or not any('CachingAllocator' in v[0] for v in Raw(out).locations.values()):
        problems.append('--all-frames does not keep the allocator frames')
    tally.report('hand-made: comments and hidden frames', problems)
    # A legacy snapshot: the stack and requested size in a block's history[0]; an
    # overflowed ring (its flag), segment_map of expandable segments, a CUDA graph pool.
    legacy = {
        'segments': [{'device': 0, 'address': 0, 'total_size': 2048, 'stream': 7, 'segment_type': 'large',
                      'segment_pool_id': (1, 2), 'is_expandable': True,
                      'blocks': [{'address': 0, 'size': 2048, 'state': 'active_allocated',
                                  'history': [{'addr': 0, 'real_size': 1500,
                                               'frames': [fr('capture', 4, 'graphs.py')]}]}]}],
        'device_traces': [[{'action': 'segment_map', 'addr': 0, 'size': 2048, 'stream': 7, 'time_us': 1,
                            'frames': []}]],
        'allocator_settings': {'trace_alloc_overflowed': True, 'trace_alloc_max_entries': 1},
    }
    path = os.path.join(tmp, 'legacy.pickle')
    open(path, 'wb').write(pickle.dumps(legacy, protocol=2))
    r = subprocess.run([binary, 'convert', path, out], capture_output=True, text=True)
    problems = [] if r.returncode == 0 else [f'exit {r.returncode}: {r.stderr.strip()[:200]}']
    if not problems:
        raw = Raw(out)
        inuse = [(raw.value(smp, 'inuse_space'), raw.locations[smp['stack'][0]][0], smp['labels'])
                 for smp in raw.samples if raw.value(smp, 'inuse_space')]
        if inuse != [(1500, 'capture graphs.py:4', {'device': 'cuda:0', 'stream': '7', 'segment_type': 'large',
                                                    'pool': '(1, 2)'})]:
            problems.append(f'legacy block: {inuse}')
        if not any('overflowed' in c for c in raw.comments):
            problems.append('no comment says the ring overflowed')
    tally.report('legacy history, overflowed ring, private pool', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--no-shared', action='store_true', help='testdata/ only')
    ap.add_argument('--exclude', help='skip snapshots whose file name matches this regular expression')
    args = ap.parse_args()
    tally = Tally()
    paths = sorted(glob.glob(os.path.join(args.testdata, 'snapshots', '*.pickle*')))
    shared = os.path.join(args.testdata, '..', '..', 'shared', 'snapshots')
    if not args.no_shared and os.path.isdir(shared):
        have = {os.path.basename(p).replace('.gz', '') for p in paths}
        paths += sorted(p for p in glob.glob(os.path.join(shared, '*.pickle')) if os.path.basename(p) not in have)
    if args.exclude:
        paths = [p for p in paths if not re.search(args.exclude, os.path.basename(p))]
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            check(tally, args.binary, p, tmp)
        check_made(tally, args.binary, tmp)
        snaps = os.path.join(args.testdata, 'snapshots')
        check_compare(tally, args.binary, os.path.join(snaps, 'expandable.pickle.gz'),
                      os.path.join(snaps, 'oom_train.pickle.gz'), tmp)
        check_bad(tally, args.binary, tmp)
        check_oom_cause(tally, args.binary, os.path.join(snaps, 'oom_train.pickle.gz'), tmp)
    return tally.summary()


def check_oom_cause(tally, binary, oom_train, tmp):
    """Why an allocation failed, against what is known of the runs: oom_train ran under a
    3 GiB per-process limit (testdata/README.md) on a device with room to spare, so the
    limit must lie between what was reserved and that plus the request; a made snapshot
    whose device had 12,345 bytes free for 1 GiB was full."""
    problems = []
    doc = json.loads(subprocess.run([binary, 'analyze', '--format', 'json', oom_train], capture_output=True,
                                    text=True, check=True).stdout)
    o = doc['ooms'][-1]
    if o['cause'] != 'allocator_limit' or not o['reserved_bytes'] <= 3 << 30 < o['reserved_bytes'] + o['requested_bytes']:
        problems.append(f'oom_train: {o}')
    text = subprocess.run([binary, 'analyze', oom_train], capture_output=True, text=True).stdout
    if 'per-process memory fraction' not in ' '.join(text.split()):
        problems.append('oom_train: the text does not say why')
    made = os.path.join(tmp, 'made_p5.pickle')
    text = ' '.join(subprocess.run([binary, 'analyze', made], capture_output=True, text=True).stdout.split())
    if 'free, less than the 1.00 GiB asked for: it was full' not in text:
        problems.append(f'made: {text[-600:]}')
    tally.report('why an allocation failed: a memory fraction (oom_train), a full device (made)', problems)


if __name__ == '__main__':
    sys.exit(main())
