#!/usr/bin/env python3
"""End-to-end tests of `torch2pprof convert`, independent of the C++ code.

Each trace in testdata/real/ (and real/torch211/) and testdata/convert/ is converted
by the real binary and read back by `go tool pprof -raw`, the client users run. The
expectations come from a model written here from the trace's own text: Python's json
module with Decimal, so times are exact; lanes by (pid, tid); busy time as the union
of each lane's intervals; flat (self) and cum (inclusive) time per frame name. The
model applies docs/reference.md's repairs itself: the profiler's own span (cat Trace) is no
work, and a python_function that outlives its Python parent is clipped to the
parent's end (dropped when it starts at or after it); ProfilerStep#N is the frame
ProfilerStep.

Prints one line per check and 'N passed, N failed' last; exits non-zero on failure.
"""
import argparse
import collections
import gzip
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally, as_text, ns, python_ends, read_events  # noqa: E402

ADDRESS = re.compile(r' at 0x[0-9a-fA-F]+')
STEP = re.compile(r'^ProfilerStep#(\d+)$')
DEVICE = {'kernel', 'gpu_memcpy', 'memcpy', 'gpu_memset', 'memset', 'mtia_ccp_events'}
PY_FRAME = re.compile(r'^(.*\.py)\((\d+)\): (.*)$')
# torch's DeviceType numbers, as [memory] events write them.
DEVICE_TYPES = {1: 'cuda', 6: 'hip', 9: 'xla', 12: 'xpu', 13: 'mps', 19: 'mtia'}


def frame_name(name):
    name = str(name)
    return 'ProfilerStep' if STEP.match(name) else ADDRESS.sub('', name)


def memory_device(t, i):
    return 'cpu' if t == 0 else f'{DEVICE_TYPES.get(t, f"device_type_{t}")}:{i}' if i >= 0 else DEVICE_TYPES.get(t, f'device_type_{t}')


# The README's list of blocking waits (and the profiler's overhead): frames whose own
# time is no work.
RUN_BACKWARD = '<built-in method run_backward of torch._C._EngineBase object>'
WAIT_BUILTINS = {
    '<built-in method acquire of _thread.lock object>', '<built-in method acquire of _thread.RLock object>',
    '<built-in method poll of select.poll object>', '<built-in method poll of select.epoll object>',
    '<built-in method poll of select.devpoll object>', '<built-in method control of select.kqueue object>',
    '<built-in function select>', '<built-in function sleep>', '<built-in method get of _queue.SimpleQueue object>',
    '<built-in method run_backward of torch._C._EngineBase object>', 'Activity Buffer Request'}
WAIT_PYTHON = {('threading.py', 'wait'), ('queue.py', 'get'), ('selectors.py', 'select'),
               ('multiprocessing/connection.py', 'wait'), ('multiprocessing/connection.py', '_poll'),
               ('multiprocessing/connection.py', 'poll')}


def is_wait(system_name):
    m = PY_FRAME.match(system_name)
    if m:
        path = '/' + m.group(1)
        return any(path.endswith('/' + f) and m.group(3) == fn for f, fn in WAIT_PYTHON)
    return system_name in WAIT_BUILTINS


# ---------------------------------------------------------------- the model
class Model:
    """What a correct converter reports for a trace."""

    def __init__(self, path):
        per_lane = collections.defaultdict(list)
        open_b = collections.defaultdict(list)
        self.thread = {}
        evs = [e for e in read_events(path) if isinstance(e, dict)]
        py_end = python_ends(evs)
        for order, e in enumerate(evs):
            lane = (as_text(e.get('pid')), as_text(e.get('tid')))
            name = frame_name(e.get('name', ''))
            ph = e.get('ph')
            if ph == 'M' and e.get('name') == 'thread_name':
                self.thread[lane] = (e.get('args') or {}).get('name')
            if (ph == 'X' and 'ts' in e and e.get('dur') is not None and ns(e['dur']) > 0
                    and str(e.get('cat', '')).lower() != 'trace'):
                s = ns(e['ts'])
                t = py_end.get(order, s + ns(e['dur']))
                if t is not None and t > s:
                    per_lane[lane].append((s, t, order, name))
            elif ph == 'B' and 'ts' in e:
                open_b[lane].append((ns(e['ts']), order, name))
            elif ph == 'E' and 'ts' in e and open_b[lane]:
                s, o, n = open_b[lane].pop()
                if ns(e['ts']) > s:
                    per_lane[lane].append((s, ns(e['ts']), o, n))
        self.busy, self.calls, self.partial, self.straddling = {}, {}, {}, {}
        # Device lanes: those with device work or device annotations (gpu_user_annotation).
        self.device_lanes = {(as_text(e.get('pid')), as_text(e.get('tid'))) for e in evs
                             if e.get('ph') == 'X' and str(e.get('cat', '')).lower() in DEVICE | {'gpu_user_annotation'}}
        # docs/reference.md: a thread that calls run_backward and runs autograd nodes, where
        # no other thread of its process runs any, runs its own backward: its run_backward
        # is work there.
        node_lanes, rb_lanes = collections.defaultdict(set), set()
        for e in evs:
            if e.get('ph') == 'X':
                lane = (as_text(e.get('pid')), as_text(e.get('tid')))
                name = str(e.get('name', ''))
                if name.startswith('autograd::engine::evaluate_function: '):
                    node_lanes[lane[0]].add(lane)
                if ADDRESS.sub('', name) == RUN_BACKWARD:
                    rb_lanes.add(lane)
        self.own_backward = {lane for lane in rb_lanes if node_lanes[lane[0]] == {lane}}
        # Device work: total, per (device, stream), and per (launching call, device event)
        # where a non-device event has the same correlation.
        self.gpu_total, self.gpu_by_stream, self.gpu_by_launch = 0, collections.Counter(), collections.Counter()
        launcher = {}
        for e in evs:
            a = e.get('args') if isinstance(e.get('args'), dict) else {}
            if e.get('ph') == 'X' and str(e.get('cat', '')).lower() not in DEVICE and 'correlation' in a:
                launcher.setdefault(a['correlation'], ADDRESS.sub('', str(e.get('name', ''))))
        # Memory per device: allocations, and bytes live (by address) at the first peak
        # of the allocated total (Total Allocated when the event has it, else the sum of Bytes).
        mem = collections.defaultdict(list)
        for e in evs:
            a = e.get('args') if isinstance(e.get('args'), dict) else {}
            if e.get('ph') in ('i', 'I') and e.get('name') == '[memory]' and 'ts' in e:
                dev = memory_device(int(a.get('Device Type', -1)), int(a.get('Device Id', -1)))
                mem[dev].append((ns(e['ts']), int(a.get('Bytes', 0)), int(a.get('Addr', 0)), a.get('Total Allocated')))
        self.alloc, self.inuse = {}, {}
        for dev, ms in mem.items():
            ms.sort(key=lambda m: m[0])
            self.alloc[dev] = (sum(1 for m in ms if m[1] > 0), sum(m[1] for m in ms if m[1] > 0))
            running, peak, peak_at, totals = 0, None, 0, False
            for k, (_, b, _, total) in enumerate(ms):
                running += b
                totals |= total is not None
                level = int(total) if total is not None else running
                if peak is None or level > peak:
                    peak, peak_at = level, k
            live, forever = {}, []
            for _, b, addr, _ in ms[:peak_at + 1]:
                if b > 0:
                    if addr:
                        live[addr] = b
                    else:
                        forever.append(b)
                elif b < 0 and addr:
                    live.pop(addr, None)
            held = sum(live.values()) + sum(forever)
            # What the peak holds beyond the trace's own allocations was allocated before
            # it began: a sample of its own, so that inuse_space adds up to the peak.
            self.inuse[dev] = (len(live) + len(forever), max(held, peak) if totals else held)
        for e in evs:
            a = e.get('args') if isinstance(e.get('args'), dict) else {}
            if e.get('ph') == 'X' and str(e.get('cat', '')).lower() in DEVICE and e.get('dur') is not None:
                d = ns(e['dur'])
                if d <= 0:
                    continue
                self.gpu_total += d
                kind = 'mtia' if 'mtia' in str(e.get('cat', '')).lower() else 'cuda'
                device = f"{kind}:{a['device'] if 'device' in a else as_text(e.get('pid'))}"
                self.gpu_by_stream[(device, as_text(e.get('tid')))] += d
                if a.get('correlation') in launcher:
                    self.gpu_by_launch[(launcher[a['correlation']], ADDRESS.sub('', str(e.get('name', ''))))] += d
        self.flat, self.cum = collections.Counter(), collections.Counter()
        self.lane_flat = {}  # lane -> self time per name, on lanes without partial overlaps
        starts = [iv[0] for L in per_lane.values() for iv in L]
        ends = [iv[1] for L in per_lane.values() for iv in L]
        self.duration = max(ends) - min(starts) if starts else 0
        for lane, L in per_lane.items():
            L.sort(key=lambda iv: (iv[0], -iv[1], iv[2]))
            self.calls[lane] = len(L)
            self.busy[lane] = self.union(L)
            self.partial[lane] = self.nest(L, lane)
            self.straddling[lane] = self.count_straddling(L)

    @staticmethod
    def union(L):
        total, cur = 0, None
        for s, t, _, _ in L:
            if cur is None or s > cur[1]:
                if cur:
                    total += cur[1] - cur[0]
                cur = [s, t]
            else:
                cur[1] = max(cur[1], t)
        return total + (cur[1] - cur[0] if cur else 0)

    @staticmethod
    def count_straddling(L):
        """Intervals that outlive their caller: the interval innermost where they began
        (of those still open then, the last in sort order) ends before them."""
        started, n = [], 0  # ends, in sort order; the caller is the last one still open
        for s, t, _, _ in L:
            while started and started[-1] <= s:
                started.pop()  # the last started has ended: the one before may be innermost
            if started and started[-1] < t:
                n += 1
            started.append(t)
        return n

    def nest(self, L, lane):
        """Per-name self and inclusive time on a lane without partial overlaps;
        returns the number of partial overlaps (then per-name totals are not kept)."""
        flat, cum = collections.Counter(), collections.Counter()
        stack, partial = [], 0  # entries [end, name, start, child_time]

        def close():
            end, name, start, child = stack.pop()
            flat[name] += end - start - child
            if name not in {x[1] for x in stack}:
                cum[name] += end - start

        for s, t, _, name in L:
            while stack and stack[-1][0] <= s:
                close()
            if stack and t > stack[-1][0]:
                partial += 1
                t = stack[-1][0]
            if stack:
                stack[-1][3] += t - s
            stack.append([t, name, s, 0])
        while stack:
            close()
        if partial == 0:
            self.flat.update(flat)
            self.cum.update(cum)
            self.lane_flat[lane] = flat
        return partial


# ---------------------------------------------------------------- pprof -raw
class Raw:
    """A profile as `go tool pprof -raw` prints it."""

    # "ID: 0xADDR M=N NAME FILE:LINE s=START" and "(SYSTEM NAME)" when it differs from NAME
    LOC = re.compile(r'^\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.*?) (\S*):(-?\d+) s=(-?\d+)(?:\((.*)\))?$')

    def __init__(self, path):
        r = subprocess.run(['go', 'tool', 'pprof', '-raw', path], capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f'go tool pprof -raw failed: {r.stderr.strip()}')
        self.parse(r.stdout)

    def parse(self, text):
        lines = text.split('\n')
        self.types, self.samples, self.locations = [], [], {}
        self.comments, self.duration = [], None
        section = None
        for i, line in enumerate(lines):
            if line.startswith('Comment: '):
                self.comments.append(line[len('Comment: '):])
            elif line.startswith('Duration: '):
                pass
            elif line == 'Samples:':
                section = 'types'
            elif line.startswith('Locations'):
                section = 'locations'
            elif line.startswith('Mappings'):
                section = None
            elif section == 'types':
                self.types = [t.replace('[dflt]', '').split('/')[0] for t in line.split()]
                self.default = next(t.split('/')[0] for t in line.split() if '[dflt]' in t)
                section = 'samples'
            elif section == 'samples' and re.match(r'^\s+-?\d+', line) and ':' in line:
                values, _, locs = line.partition(':')
                self.samples.append({'values': [int(v) for v in values.split()],
                                     'stack': [int(x) for x in locs.split()], 'labels': {}})
            elif section == 'samples' and line.strip() and self.samples:
                for key, value in re.findall(r'(\S+):\[(.*?)\]', line):
                    # Numeric labels print with their unit, which is their key: "tid:[439 tid]".
                    if value.endswith(' ' + key) and re.match(r'^-?\d+$', value[:-len(key) - 1]):
                        value = value[:-len(key) - 1]
                    self.samples[-1]['labels'][key] = value
            elif section == 'locations':
                m = self.LOC.match(line)
                if m:
                    name = m.group(2)
                    self.locations[int(m.group(1))] = (name, m.group(3), int(m.group(4)), int(m.group(5)),
                                                       m.group(6) if m.group(6) is not None else name)

    def value(self, sample, name):
        return sample['values'][self.types.index(name)]


class RawText(Raw):
    """The same from text -raw already printed (after -tagfocus and the like)."""

    def __init__(self, text):
        self.parse(text)


# ---------------------------------------------------------------- checks
class Checks(Tally):
    def __init__(self, binary, tmp):
        super().__init__()
        self.binary, self.tmp = binary, tmp

    def convert(self, args, stdin=None):
        r = subprocess.run([self.binary] + args, capture_output=True, stdin=stdin)
        return r

    def check_trace(self, trace):
        """The model's per-lane stacks are checked on --thread-stacks; the default profile
        (backward under forward) must keep every lane's wall and calls, and its work
        (the default) must be wall less the README's waits."""
        out = os.path.join(self.tmp, os.path.basename(trace) + '.pb.gz')
        r = self.convert(['convert', '--thread-stacks', '--critical', trace, out])
        if r.returncode != 0:
            return self.report(trace, [f'exit {r.returncode}: {r.stderr.decode()[:300]}'])
        problems = []
        top = subprocess.run(['go', 'tool', 'pprof', '-top', out], capture_output=True, text=True)
        if top.returncode != 0 or 'flat%' not in top.stdout:
            problems.append('go tool pprof -top failed')
        # pprof names the profile after the trace (its one Mapping), never "unknown".
        first = (top.stdout + top.stderr).split('\n')[0]
        if first != 'File: ' + os.path.basename(trace):
            problems.append(f'pprof -top names the profile {first!r}')
        raw, model = Raw(out), Model(trace)
        problems += self.check_default(trace, model)
        # critical: each analysed step's critical path, where there are steps; its total is the
        # steps' time as analyze's step table counts it (every nanosecond of a step once).
        steps = json.loads(subprocess.run([self.binary, 'analyze', '--format', 'json', trace],
                                          capture_output=True).stdout or b'{}').get('steps', [])
        want_types = ['calls', 'wall', 'work'] + (['gpu'] if model.gpu_total else []) + (
            ['critical'] if steps else []) + (
            ['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space'] if model.alloc else [])
        if steps and 'critical' in raw.types:
            got = sum(raw.value(smp, 'critical') for smp in raw.samples)
            want = sum(ns(s['total_us']) for s in steps)
            if got != want:
                problems.append(f'critical total {got} ns, the steps\' {want} ns')
        if model.alloc and raw.types == want_types:
            alloc, inuse = collections.Counter(), collections.Counter()
            for smp in raw.samples:
                dev = smp['labels'].get('device')
                for k, t in enumerate(('alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space')):
                    if raw.value(smp, t):
                        (alloc if k < 2 else inuse)[(dev, k % 2)] += raw.value(smp, t)
            for dev in model.alloc:
                got_a = (alloc[(dev, 0)], alloc[(dev, 1)])
                got_i = (inuse[(dev, 0)], inuse[(dev, 1)])
                if got_a != model.alloc[dev] or got_i != model.inuse[dev]:
                    problems.append(f'memory {dev}: alloc {got_a} inuse {got_i}, want {model.alloc[dev]} {model.inuse[dev]}')
        if raw.types != want_types or raw.default != 'work':
            problems.append(f'sample types {raw.types}, default {raw.default}, want {want_types}')
        if model.gpu_total:
            gpu_total, by_stream, by_launch = 0, collections.Counter(), collections.Counter()
            for smp in raw.samples:
                g = raw.value(smp, 'gpu')
                if not g:
                    continue
                gpu_total += g
                by_stream[(smp['labels'].get('device'), smp['labels'].get('stream'))] += g
                frames = [self.system_name(raw.locations[x]) for x in smp['stack']]
                if len(frames) >= 2:
                    by_launch[(frames[1], frames[0])] += g
            if gpu_total != model.gpu_total:
                problems.append(f'gpu total {gpu_total} != device time {model.gpu_total}')
            if by_stream != model.gpu_by_stream:
                problems.append(f'gpu by (device, stream) {dict(by_stream)} != {dict(model.gpu_by_stream)}')
            for key, want in model.gpu_by_launch.items():
                if by_launch[key] != want:
                    problems.append(f'gpu under launch {key}: {by_launch[key]} != {want}')
                    break
        wall, calls = collections.Counter(), collections.Counter()
        flat, cum = collections.Counter(), collections.Counter()
        clean = {lane for lane, n in model.partial.items() if n == 0}
        for s in raw.samples:
            lane = (s['labels'].get('pid'), s['labels'].get('tid'))
            w = raw.value(s, 'wall')
            wall[lane] += w
            calls[lane] += raw.value(s, 'calls')
            if model.thread.get(lane) and s['labels'].get('thread') != model.thread[lane]:
                problems.append(f'lane {lane}: thread label {s["labels"].get("thread")!r}')
            frames = [raw.locations[x] for x in s['stack']]
            if lane in clean:
                names = [self.system_name(f) for f in frames]
                flat[names[0]] += w
                for n in set(names):
                    cum[n] += w
            for f in frames:
                m = PY_FRAME.match(self.system_name(f))
                want = (m.group(1), int(m.group(2)), int(m.group(2))) if m else ('', 0, 0)
                if (f[1], f[2], f[3]) != want:
                    problems.append(f'frame {f} has file/line {f[1:4]}, its name gives {want}')
                if m and ('(' in f[0] or m.group(3) not in f[0] or (os.path.basename(m.group(1)) not in f[0])):
                    problems.append(f'python frame {f} has name {f[0]!r}')
        for lane in set(model.busy) | set(wall):
            if wall[lane] != model.busy.get(lane, 0):
                problems.append(f'lane {lane}: wall {wall[lane]} != busy {model.busy.get(lane, 0)}')
            if calls[lane] != model.calls.get(lane, 0):
                problems.append(f'lane {lane}: calls {calls[lane]} != intervals {model.calls.get(lane, 0)}')
        for name in set(model.flat) | set(flat):
            if flat[name] != model.flat[name] or cum[name] != model.cum[name]:
                problems.append(f'{name!r}: flat {flat[name]} cum {cum[name]}, want {model.flat[name]} {model.cum[name]}')
        # The profile names its input by file name: no path to leak when it is shared.
        if any(os.path.dirname(os.path.abspath(trace)) in c or os.path.dirname(trace) + '/' in c for c in raw.comments):
            problems.append(f'a comment holds the input\'s path: {raw.comments[0]!r}')
        partial = sum(model.straddling.values())
        if not any(f'intervals that outlive their caller: {partial}' in c for c in raw.comments):
            problems.append(f'comments do not report {partial} partial overlaps: {raw.comments}')
        self.report(os.path.relpath(trace), problems)
        return raw

    def check_default(self, trace, model):
        """The default profile keeps every lane's wall and calls; its work (the default
        sample type) is wall less the README's waits on CPU threads, and nothing on device
        lanes (their time is gpu): never the idle time inside a device annotation."""
        out = os.path.join(self.tmp, os.path.basename(trace) + '.default.pb.gz')
        r = self.convert(['convert', trace, out])
        if r.returncode != 0:
            return [f'default: exit {r.returncode}']
        raw, problems = Raw(out), []
        if 'critical' in raw.types:  # only with --critical: the walk costs a third more
            problems.append('default: a critical sample type')
        wall, calls, work = collections.Counter(), collections.Counter(), collections.Counter()
        bad_sample = None
        for smp in raw.samples:
            lane = (smp['labels'].get('pid'), smp['labels'].get('tid'))
            w, k = raw.value(smp, 'wall'), raw.value(smp, 'work')
            wall[lane] += w
            calls[lane] += raw.value(smp, 'calls')
            work[lane] += k
            leaf = self.system_name(raw.locations[smp['stack'][0]]) if smp['stack'] else ''
            waits = is_wait(leaf) and not (leaf == RUN_BACKWARD and lane in model.own_backward)
            want = 0 if lane in model.device_lanes or waits else w
            if k != want and bad_sample is None:
                bad_sample = f'default: work {k} of a sample with wall {w} and leaf {leaf!r} on lane {lane}'
        if bad_sample:
            problems.append(bad_sample)
        # The default view's first row is work, never the step annotation's idle time: on
        # the torch 2.11 traces (with_stack, so Python frames hold the host's time between
        # operators) it was ProfilerStep in 5 of 7. Older traces without Python frames leave
        # that host time to the step itself, and it can lead there.
        top = subprocess.run(['go', 'tool', 'pprof', '-top', '-nodecount=1', out], capture_output=True, text=True)
        rows = [ln.split()[-1] for ln in top.stdout.splitlines() if ln.strip()[:1].isdigit() and '%' in ln]
        if 'torch211' in trace and rows and rows[0] == 'ProfilerStep':
            problems.append('default: the first row of go tool pprof -top is ProfilerStep')
        for lane in set(model.busy) | set(wall):
            if (wall[lane], calls[lane]) != (model.busy.get(lane, 0), model.calls.get(lane, 0)):
                problems.append(f'default: lane {lane}: wall {wall[lane]} calls {calls[lane]}, '
                                f'want {model.busy.get(lane, 0)} {model.calls.get(lane, 0)}')
            if lane in model.device_lanes:
                if work[lane]:
                    problems.append(f'default: device lane {lane}: work {work[lane]}, want 0')
            elif lane in model.lane_flat:
                waits = sum(v for name, v in model.lane_flat[lane].items() if is_wait(name))
                if work[lane] != model.busy[lane] - waits:
                    problems.append(f'default: lane {lane}: work {work[lane]}, busy less waits {model.busy[lane] - waits}')
        return problems

    @staticmethod
    def system_name(frame):
        return frame[4]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--exclude', help='leave traces whose name matches this regular expression out of the '
                                      'per-trace checks (the sanitizer builds: time)')
    a = ap.parse_args()
    if not shutil.which('go'):
        print('FAIL: go is not installed (apt-get install golang-go); the end-to-end tests need go tool pprof')
        print('0 passed, 1 failed')
        return 1
    traces = []
    for sub in ('real', os.path.join('real', 'torch211'), 'convert'):
        d = os.path.join(a.testdata, sub)
        traces += sorted(os.path.join(d, f) for f in os.listdir(d) if '.json' in f and 'key_averages' not in f
                         and not (a.exclude and re.search(a.exclude, f)))
    with tempfile.TemporaryDirectory() as tmp:
        c = Checks(a.binary, tmp)
        for t in traces:
            try:
                c.check_trace(t)
            except Exception as e:  # a crash of a check is a failure too
                c.report(t, [f'{type(e).__name__}: {e}'])
        extra_checks(c, a.testdata, tmp)
        label_checks(c, a.testdata, tmp)
        readme_checks(c, a.testdata, tmp)
        folded_checks(c, a.testdata, tmp)
        folded_input_checks(c, a.testdata, tmp)
        pstats_checks(c, a.testdata, tmp)
        order_checks(c, a.testdata, tmp)
        return c.summary()


def profile_content(path):
    """A profile as what a reader sees: (labels, stack of names) -> values."""
    raw, out = Raw(path), collections.Counter()
    for smp in raw.samples:
        key = (tuple(sorted(smp['labels'].items())), tuple(raw.locations[x][4] for x in smp['stack']))
        for k, v in enumerate(smp['values']):
            out[key + (raw.types[k],)] += v
    return {k: v for k, v in out.items() if v}


def order_checks(c, testdata, tmp):
    """The stacks of intervals that are not identical never depend on the file's order:
    a real trace with its timed events shuffled (identical intervals keep their order
    among themselves, the documented tie rule) converts to the same profile."""
    import random
    # The torch 1.13 trace rounds ts and dur apart: partial overlaps on every lane, where
    # the order of the rests of split intervals depended on the file's order.
    for name in ('torch113__transformer_small_threads.pt.trace.json.gz', 'torch211/lm_train.pt.trace.json.gz',
                 'torch211/gpt2_hf.pt.trace.json.gz'):
        trace = os.path.join(testdata, 'real', name)
        raw = open(trace, 'rb').read()
        doc = json.loads(gzip.decompress(raw) if raw[:2] == b'\x1f\x8b' else raw)
        evs = doc['traceEvents'] if isinstance(doc, dict) else doc
        timed = [i for i, e in enumerate(evs) if isinstance(e, dict) and e.get('ph') == 'X' and float(e.get('dur', 0)) > 0]
        problems = []
        want = None
        for seed in (1, 2):
            order = timed[:]
            random.Random(seed).shuffle(order)
            # Identical intervals (lane, ts, dur) keep their order among themselves.
            groups = collections.defaultdict(list)
            for slot, i in enumerate(order):
                e = evs[i]
                groups[(str(e.get('pid')), str(e.get('tid')), str(e['ts']), str(e['dur']))].append(slot)
            for slots in groups.values():
                members = sorted(order[s] for s in slots)
                for s, i in zip(sorted(slots), members):
                    order[s] = i
            shuffled = list(evs)
            for slot, i in zip(timed, order):
                shuffled[slot] = evs[i]
            path = os.path.join(tmp, f'shuffled_{seed}.json')
            json.dump(dict(doc, traceEvents=shuffled) if isinstance(doc, dict) else shuffled, open(path, 'w'))
            out = os.path.join(tmp, f'shuffled_{seed}.pb.gz')
            c.convert(['convert', path, out])
            got = profile_content(out)
            if want is None:
                ref = os.path.join(tmp, 'unshuffled.pb.gz')
                c.convert(['convert', trace, ref])
                want = profile_content(ref)
            diff = set(got.items()) ^ set(want.items())
            if diff:
                problems.append(f'seed {seed}: {len(diff)} (labels, stack, type) values differ, e.g. {sorted(diff)[0]}')
        c.report(f'{os.path.basename(name)}: the profile does not depend on the order of its timed events', problems)


def extra_checks(c, testdata, tmp):
    """Input forms and output determinism."""
    sample = os.path.join(testdata, 'real', 'hta__timeline_analysis__sampled_rank-0.json.gz')
    ref = os.path.join(tmp, 'ref.pb.gz')
    c.convert(['convert', sample, ref])
    ref_bytes = open(ref, 'rb').read()

    # gzip by magic bytes, not by name; stdin in; stdout out; the backward-compatible form.
    disguised = os.path.join(tmp, 'disguised.json')
    shutil.copy(sample, disguised)
    ref_raw = Raw(ref)
    for name, args, stdin_path in [
            ('gzip detected by magic bytes', ['convert', disguised, os.path.join(tmp, 'a.pb.gz')], None),
            ('stdin input', ['convert', '-', os.path.join(tmp, 'a.pb.gz')], sample)]:
        r = c.convert(args, stdin=open(stdin_path, 'rb') if stdin_path else None)
        problems = [] if r.returncode == 0 else [f'exit {r.returncode}: {r.stderr.decode()[:200]}']
        got = None if problems else Raw(os.path.join(tmp, 'a.pb.gz'))
        if got and (got.samples != ref_raw.samples or got.locations != ref_raw.locations):
            problems.append('profile differs from the plain conversion')
        c.report(name, problems)
    # Same file name, so the very same bytes.
    variants = {
        'torch2pprof IN OUT form': ([sample, os.path.join(tmp, 'c.pb.gz')], None, 'c.pb.gz'),
        '--threads 1 gives the same bytes': (['convert', '--threads', '1', sample, os.path.join(tmp, 'd.pb.gz')], None, 'd.pb.gz'),
        'Go-style -threads 2': (['convert', '-threads', '2', sample, os.path.join(tmp, 'e.pb.gz')], None, 'e.pb.gz'),
    }
    for name, (args, stdin_path, out) in variants.items():
        stdin = open(stdin_path, 'rb') if stdin_path else None
        r = c.convert(args, stdin=stdin)
        problems = [] if r.returncode == 0 else [f'exit {r.returncode}: {r.stderr.decode()[:200]}']
        if not problems and open(os.path.join(tmp, out), 'rb').read() != ref_bytes:
            problems.append('output differs from the plain conversion')
        c.report(name, problems)
    r = subprocess.run([c.binary, 'convert', sample, '-'], capture_output=True)
    c.report('stdout output', [] if r.returncode == 0 and r.stdout == ref_bytes else [f'exit {r.returncode}'])

    # Four ranks in one profile: -tagfocus=rank=N selects exactly that trace's busy time.
    names = ['hta__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz', 'hta__call_stack__backward_thread.json',
             'torch113__mlp_two_threads.pt.trace.json', 'hta__execution_trace__benchmark_simple_add_trace.json.gz']
    paths = [os.path.join(testdata, 'real', n) for n in names]
    job = os.path.join(tmp, 'job.pb.gz')
    r = c.convert(['convert', '-o', job] + paths)
    problems = [] if r.returncode == 0 else [f'exit {r.returncode}: {r.stderr.decode()[:200]}']
    if not problems:
        ranks = [34, 0, 2, 0]  # distributedInfo; two say 0 and one has none: positions are used
        ranks = list(range(4)) if len(set(ranks)) < 4 else ranks
        for rank, path in zip(ranks, paths):
            g = subprocess.run(['go', 'tool', 'pprof', f'-tagfocus=rank={rank}', '-raw', job], capture_output=True, text=True)
            total = 0
            for line in g.stdout.split('Samples:')[1].split('Locations')[0].split('\n')[2:]:
                if re.match(r'^\s+\d', line) and ':' in line:
                    total += int(line.split(':')[0].split()[1])
            want = sum(Model(path).busy.values())
            if total != want:
                problems.append(f'rank {rank}: wall {total}, trace busy {want}')
    c.report('4 ranks in one profile, selected by -tagfocus=rank', problems)

    # Profiles merge as a tree: convert -o over profiles that convert wrote, alone, mixed
    # with traces, or made by convert -o themselves, writes the bytes convert -o writes
    # over the traces (the four above; and the real four-rank DDP set, with its ranks).
    ddp4 = [os.path.join(testdata, 'real', 'torch211', f'ddp_gloo_4ranks_late2_rank{r}.pt.trace.json.gz')
            for r in range(4)]
    for label, traces in (('mixed traces, positions for ranks', paths), ('4 DDP ranks', ddp4)):
        problems = []
        singles = []
        for k, t in enumerate(traces):
            singles.append(os.path.join(tmp, f'single{k}.pb.gz'))
            c.convert(['convert', '--quiet', t, singles[-1]])
        want_path = os.path.join(tmp, 'want.pb.gz')
        c.convert(['convert', '--quiet', '-o', want_path] + traces)
        want = open(want_path, 'rb').read()
        half = [os.path.join(tmp, 'half0.pb.gz'), os.path.join(tmp, 'half1.pb.gz')]
        c.convert(['convert', '--quiet', '-o', half[0], singles[0], traces[1]])
        c.convert(['convert', '--quiet', '-o', half[1], traces[2], singles[3]])
        ways = {'profiles': singles, 'mixed': [singles[0], traces[1], singles[2], traces[3]], 'a tree': half}
        for way, inputs in ways.items():
            out = os.path.join(tmp, 'merged.pb.gz')
            r = c.convert(['convert', '--quiet', '-o', out] + inputs)
            if r.returncode:
                problems.append(f'{way}: exit {r.returncode}: {r.stderr.decode()[:200]}')
            elif open(out, 'rb').read() != want:
                problems.append(f'{way}: differs from convert -o over the traces')
        c.report(f'convert -o over profiles equals convert -o over their traces ({label})', problems)
    # Inputs that are not convert's profiles: one line each, nothing written.
    problems = []
    raw = gzip.decompress(open(singles[0], 'rb').read())
    cut = os.path.join(tmp, 'cut.pb')
    open(cut, 'wb').write(raw[:len(raw) // 2])
    for bad, words in ((cut, 'not a pprof profile'),):
        out = os.path.join(tmp, 'never.pb.gz')
        r = c.convert(['convert', '-o', out, bad, traces[1]])
        err = r.stderr.decode().strip()
        if r.returncode != 1 or os.path.exists(out) or words not in err or '\n' in err or 'byte ' not in err:
            problems.append(f'{os.path.basename(bad)}: exit {r.returncode}: {err[:200]}')
    c.report('a broken profile among the inputs: one line with its byte offset, nothing written', problems)

    # The uncompressed form of the same trace gives the same profile but for the file name.
    plain = os.path.join(tmp, 'plain.json')
    open(plain, 'wb').write(gzip.decompress(open(sample, 'rb').read()))
    c.convert(['convert', plain, os.path.join(tmp, 'f.pb.gz')])
    a, b = Raw(ref), Raw(os.path.join(tmp, 'f.pb.gz'))
    c.report('plain JSON equals gzip JSON', [] if a.samples == b.samples else ['samples differ'])


def label_checks(c, testdata, tmp):
    """On the torch 2.11 traces: every GPU sample carries the step it was launched in,
    and -tagfocus=tid=N (a numeric label) selects exactly thread N."""
    d = os.path.join(testdata, 'real', 'torch211')
    for f in sorted(os.listdir(d)):
        if not f.endswith('.pt.trace.json.gz'):
            continue
        trace, out = os.path.join(d, f), os.path.join(tmp, f + '.pb.gz')
        c.convert(['convert', trace, out])
        raw, model = Raw(out), Model(trace)
        evs = [e for e in read_events(trace) if isinstance(e, dict)]
        steps = [e for e in evs if e.get('ph') == 'X' and STEP.match(str(e.get('name', '')))
                 and e.get('cat') in ('cpu_op', 'user_annotation')]
        problems = []
        if steps and 'gpu' in raw.types:
            missing = sum(raw.value(smp, 'gpu') for smp in raw.samples
                          if raw.value(smp, 'gpu') and 'step' not in smp['labels'])
            if missing:
                problems.append(f'{missing} ns of gpu samples without a step label')
        c.report(f'{f}: gpu samples carry their step', problems)
        # Backward under forward: GPU time sits under model code. What may stay outside is
        # backward work with no link (AccumulateGrad hooks: DDP's reducer) and the gloo
        # worker threads' copies, which nothing in the trace ties to model code.
        if 'gpu' in raw.types and any(PY_FRAME.match(x[4]) for x in raw.locations.values()):
            total, under, outside = 0, 0, collections.Counter()
            for smp in raw.samples:
                g = raw.value(smp, 'gpu')
                names = [raw.locations[x][4] for x in smp['stack']]
                total += g
                if any(PY_FRAME.match(n) for n in names):
                    under += g
                elif g:
                    outside[names[-1]] += g
            def unlinked(root):
                return root in ('gloo:all_reduce', 'autograd::engine::evaluate_function: torch::autograd::AccumulateGrad') \
                    or root.startswith('torch.distributed.ddp.reducer::')
            problems = []
            if under < 0.97 * total and any(not unlinked(r) for r in outside):
                problems.append(f'{100 * under / total:.1f}% of gpu time under a Python frame; outside, under '
                                f'{sorted(r for r in outside if not unlinked(r))[:3]}')
            c.report(f'{f}: gpu time under a Python frame ({100 * under / total:.1f}%)', problems)
        # The busiest host thread, and the thread of the first step.
        host = {lane: busy for lane, busy in model.busy.items() if re.match(r'^\d+$', lane[1])
                and not any(str(e.get('cat', '')).lower() in DEVICE and as_text(e.get('tid')) == lane[1] for e in evs[:2000])}
        tids = {max(host, key=host.get)[1]} if host else set()
        if steps:
            tids.add(as_text(steps[0].get('tid')))
        for tid in sorted(tids):
            g = subprocess.run(['go', 'tool', 'pprof', f'-tagfocus=tid={tid}', '-raw', out], capture_output=True, text=True)
            problems = []
            if g.returncode != 0:
                problems.append(g.stderr.strip()[:200])
            else:
                sel = RawText(g.stdout)
                others = {smp['labels'].get('tid') for smp in sel.samples} - {tid}
                wall = sum(sel.value(smp, 'wall') for smp in sel.samples)
                want = sum(b for lane, b in model.busy.items() if lane[1] == tid)
                if others:
                    problems.append(f'samples of other threads selected: {sorted(others)[:5]}')
                if wall != want:
                    problems.append(f'wall {wall}, thread {tid} is busy {want}')
            c.report(f'{f}: -tagfocus=tid={tid} selects that thread', problems)


def readme_checks(c, testdata, tmp):
    """Every `go tool pprof` command of the README's and docs/reference.md's code blocks, run as written on real
    profiles: lm_train for out.pb.gz, before.pb.gz and lm_train.pb.gz, the two DDP ranks
    merged for job.pb.gz, the CS336 training step's snapshot for mem.pb.gz, with the README's placeholder ids put to ids those traces have.
    Where the README shows a command's output ("$ go tool pprof ..." and the lines after
    it), each line shown must be in what pprof prints."""
    import shlex
    root = os.path.dirname(os.path.abspath(testdata))
    docs = [os.path.join(root, 'README.md'), os.path.join(root, 'docs', 'reference.md')]  # the worked example
    d = os.path.join(testdata, 'real', 'torch211')
    out, job = os.path.join(tmp, 'readme_out.pb.gz'), os.path.join(tmp, 'readme_job.pb.gz')
    c.convert(['convert', os.path.join(d, 'lm_train.pt.trace.json.gz'), out])
    crit = os.path.join(tmp, 'readme_crit.pb.gz')  # convert --critical
    c.convert(['convert', '--critical', os.path.join(d, 'lm_train.pt.trace.json.gz'), crit])
    c.convert(['convert', '-o', job, os.path.join(d, 'ddp_gloo_2ranks_rank0.pt.trace.json.gz'),
               os.path.join(d, 'ddp_gloo_2ranks_rank1.pt.trace.json.gz')])
    mem = os.path.join(tmp, 'readme_mem.pb.gz')  # the README's memory snapshot example
    c.convert(['convert', os.path.join(testdata, 'snapshots', 'cs336__medium_ctx128_training_step.pickle.gz'), mem])
    commands, in_code = [], False  # (command, [output lines shown])
    for line in (x for doc in docs for x in open(doc)):
        line = line.rstrip('\n')
        if line.startswith('```'):
            in_code = not in_code
            commands.append((None, []))  # what follows belongs to no command
        elif in_code and line.startswith('go tool pprof '):
            commands.append((line.split('  #')[0].strip(), None))
        elif in_code and line.startswith('$ go tool pprof '):
            commands.append((line[2:].split('  #')[0].strip(), []))  # its output follows
        elif in_code and line.startswith('$ ') or not in_code:
            commands.append((None, []))
        elif commands and commands[-1][1] is not None and commands[-1][0] and line.strip():
            commands[-1][1].append(line)
    commands = [(line, shown or []) for line, shown in commands if line]
    if len(commands) < 8:
        c.report('README pprof examples found', [f'only {len(commands)}'])
    subst = {'out.pb.gz': out, 'crit.pb.gz': crit, 'lm_train.pb.gz': out, 'job.pb.gz': job, 'mem.pb.gz': mem, '-tagfocus=tid=1234': '-tagfocus=tid=439',
             '-tagfocus=step=5': '-tagfocus=step=3', '-tagfocus=rank=3': '-tagfocus=rank=1',
             '-diff_base=before.pb.gz': '-diff_base=' + out}
    for line, shown in commands:
        args = [subst.get(a, a) for a in shlex.split(line)[3:]]
        args = ['-raw' if a.startswith('-http') else a for a in args]  # a server: its data, printed
        r = subprocess.run(['go', 'tool', 'pprof'] + args, capture_output=True, text=True, cwd=tmp)
        text = r.stdout + r.stderr
        problems = [] if r.returncode == 0 else [f'exit {r.returncode}: {text.strip()[-200:]}']
        if 'tagfocus' in line and ('accounting for 0' in text or 'Showing nodes' not in text):
            problems.append('the filter selected nothing')
        if '-list' in line and 'ROUTINE' not in text:
            problems.append('no routine listed')
        if '-tags' in line and 'tid:' not in text:
            problems.append('no tid label')
        printed = {' '.join(x.split()) for x in text.split('\n')}
        for want in shown:
            if ' '.join(want.split()) not in printed:
                problems.append(f'the README shows {want.strip()!r}, pprof does not print it')
                break
        c.report(f'README: {line}', problems)


def read_folded(path):
    """A folded-stacks reader as flamegraph.pl's: the value after the last space."""
    stacks = {}
    for line in open(path, encoding='utf-8'):
        stack, _, value = line.rstrip('\n').rpartition(' ')
        assert stack and re.match(r'^-?\d+$', value), f'bad line {line!r}'
        assert stack not in stacks, f'stack twice: {stack!r}'
        stacks[stack] = int(value)
    return stacks


def folded_checks(c, testdata, tmp):
    """convert --format folded, read back by a folded reader: per sample type, the total
    and each thread's total (the root frame) equal what go tool pprof reads from the
    pprof profile of the same trace; lines are sorted; --folded-root none drops the root."""
    d = os.path.join(testdata, 'real', 'torch211')
    for name in sorted(f for f in os.listdir(d) if f.endswith('.pt.trace.json.gz')):
        trace = os.path.join(d, name)
        pb = os.path.join(tmp, 'folded_ref.pb.gz')
        problems = []
        r = c.convert(['convert', trace, pb])
        if r.returncode != 0:
            c.report(f'folded {name}', [f'exit {r.returncode}'])
            continue
        raw = Raw(pb)
        for t in raw.types:
            out = os.path.join(tmp, 'out.folded')  # the format from the extension
            r = c.convert(['convert', '--sample-type', t, trace, out])
            if r.returncode != 0:
                problems.append(f'{t}: exit {r.returncode}: {r.stderr.decode()[:200]}')
                continue
            lines = open(out, encoding='utf-8').read().splitlines()
            stacks_seen = [ln.rpartition(' ')[0] for ln in lines]
            if len(set(stacks_seen)) != len(stacks_seen):
                problems.append(f'{t}: a stack has two lines')
            # Depth first: a line's callers (its stack's prefixes) come before it where they have lines.
            at = {st: k for k, st in enumerate(stacks_seen)}
            late = [st for st in stacks_seen if st.rpartition(';')[0] in at and at[st.rpartition(';')[0]] > at[st]]
            if late:
                problems.append(f'{t}: {late[0][-80:]!r} comes before its caller')
            stacks = read_folded(out)
            want_total, want_thread = 0, {}
            for smp in raw.samples:
                v = raw.value(smp, t)
                want_total += v
                # The root: the device for device time (gpu), else the thread.
                root = smp['labels'].get('thread', '').strip() or 'tid ' + smp['labels'].get('tid', '')
                if t == 'gpu' and smp['labels'].get('device'):
                    root = smp['labels']['device']
                if 'tid' in smp['labels'] or smp['labels'].get('thread'):
                    want_thread[root] = want_thread.get(root, 0) + v
            got_total = sum(stacks.values())
            if got_total != want_total:
                problems.append(f'{t}: folded total {got_total}, pprof total {want_total}')
            got_thread = {}
            for stack, v in stacks.items():
                got_thread[stack.split(';')[0]] = got_thread.get(stack.split(';')[0], 0) + v
            for root, v in want_thread.items():
                if v and got_thread.get(root) != v:
                    problems.append(f'{t}: thread {root!r}: folded {got_thread.get(root)}, pprof {v}')
            if t == raw.default:
                bare = os.path.join(tmp, 'bare.folded')
                c.convert(['convert', '--folded-root', 'none', trace, bare])
                roots = {s.split(';')[0] for s in read_folded(bare)}
                if roots & set(want_thread):
                    problems.append('--folded-root none still has thread roots')
                if sum(read_folded(bare).values()) != want_total:
                    problems.append('--folded-root none changes the total')
        c.report(f'folded stacks of {name} add up to the pprof profile', problems)
    # Device time's default root is the device: a layer's forward and its backward (launched
    # by the autograd thread) are one tower, the backward under the forward.
    gpu = os.path.join(tmp, 'gpu.folded')
    c.convert(['convert', '--sample-type', 'gpu', os.path.join(d, 'lm_train.pt.trace.json.gz'), gpu])
    layer = [st for st in read_folded(gpu) if 'nn.Module: TransformerEncoderLayer_0;' in st]
    roots = {st.split(';')[0] for st in layer}
    c.report('folded gpu: a layer and its backward under one root',
             [] if roots == {'cuda:0'} and any('[backward]' in st for st in layer) else [f'roots {roots}'])
    pb = os.path.join(tmp, 'gpu_default.pb.gz')
    c.convert(['convert', '--sample-type', 'gpu', os.path.join(d, 'lm_train.pt.trace.json.gz'), pb])
    c.report('--sample-type on a pprof output sets the type pprof shows first',
             [] if Raw(pb).default == 'gpu' else [f'default {Raw(pb).default}'])
    # ... and holds that value alone: -traces lists only samples with device time, -tags
    # gives the device its total (on the default profile a CPU sample carries gpu 0).
    traces = subprocess.run(['go', 'tool', 'pprof', '-traces', pb], capture_output=True, text=True).stdout
    blocks = traces.split('-----------+-------------------------------------------------------')[1:]
    zero = [b for b in blocks if re.search(r'^\s+0(\.0+)?[a-z]*\s', b, re.M)]
    tags = subprocess.run(['go', 'tool', 'pprof', '-tags', pb], capture_output=True, text=True).stdout
    c.report(f'--sample-type gpu: -traces lists {len(blocks)} samples, each with device time; -tags totals the device',
             [] if blocks and not zero and re.search(r'device: Total [1-9]', tags) and len(traces.splitlines()) < 60000
             else [f'{len(zero)} of {len(blocks)} samples without device time; tags {tags[:80]!r}'])
    r = c.convert(['convert', '--sample-type', 'nope', os.path.join(d, 'lm_train.pt.trace.json.gz'),
                   os.path.join(tmp, 'x.folded')])
    c.report('an unknown --sample-type is a usage error and writes nothing',
             [] if r.returncode == 2 and not os.path.exists(os.path.join(tmp, 'x.folded')) else [f'exit {r.returncode}'])


def torch_export_frame(text):
    """torch's export_stacks frame with its spaces given back (docs/reference.md, "Folded
    stacks"), ported from the rules there: Python frames, nn.Module frames, built-ins."""
    m = re.match(r'^(.+\(\d+\)):_(.+)$', text)
    if m:
        return f'{m.group(1)}: {m.group(2)}'
    if text.startswith('nn.Module:_'):
        return 'nn.Module: ' + text[len('nn.Module:_'):]
    m = re.match(r'^<built-in_function_(.+)>$', text)
    if m:
        return f'<built-in function {m.group(1)}>'
    # The address goes, as convert drops it from every frame (so repeated calls aggregate).
    m = re.match(r'^<built-in_method_(.+?)_of_(.+)_object(_at_0x[0-9a-f]+)?>$', text)
    if m:
        return f'<built-in method {m.group(1)} of {m.group(2)} object>'
    return text


def pprof_stacks(raw):
    """stack (root first, ';'-joined) -> value, from go tool pprof -raw: the frames' system
    names (the names as given; the pprof writer adapts the name pprof displays)."""
    out = collections.Counter()
    for smp in raw.samples:
        frames = [raw.locations[i][4] for i in reversed(smp['stack'])]
        out[';'.join(frames)] += smp['values'][0]
    return dict(out)


def folded_input_checks(c, testdata, tmp):
    """Folded stacks as convert's input: what convert writes as folded stacks reads back
    stack for stack and value for value through go tool pprof; torch's export_stacks reads
    as microseconds with its frames' spaces given back; it converts alone."""
    d = os.path.join(testdata, 'real', 'torch211')
    for name in ('lm_train', 'multistream', 'resnet50_dl'):
        trace = os.path.join(d, name + '.pt.trace.json.gz')
        folded, back = os.path.join(tmp, 'in.folded'), os.path.join(tmp, 'back.pb.gz')
        problems = []
        for t in ('wall', 'gpu'):
            r1 = c.convert(['convert', '--sample-type', t, trace, folded])
            r2 = c.convert(['convert', folded, back])
            if r1.returncode or r2.returncode:
                problems.append(f'{t}: exit {r1.returncode}, {r2.returncode}: {r2.stderr.decode()[:200]}')
                continue
            raw = Raw(back)
            if raw.types != ['samples']:
                problems.append(f'{t}: sample types {raw.types}')
            want, got = read_folded(folded), pprof_stacks(raw)
            if got != want:
                diff = sorted(set(want.items()) ^ set(got.items()))[:2]
                problems.append(f'{t}: {len(got)} stacks read back, {len(want)} written; first differences {diff}')
        c.report(f'folded stacks of {name} read back stack for stack through go tool pprof', problems)
    # torch's export_stacks: a real file of torch 2.13's, its frames given their spaces back.
    stacks = os.path.join(testdata, 'folded', 'export_stacks.txt')
    out = os.path.join(tmp, 'export_stacks.pb.gz')
    r = c.convert(['convert', stacks, out])
    problems = [] if r.returncode == 0 else [f'exit {r.returncode}: {r.stderr.decode()[:200]}']
    if not problems:
        raw = Raw(out)
        want = collections.Counter()
        for stack, v in read_folded_lines(stacks):
            want[';'.join(torch_export_frame(f) for f in stack.split(';'))] += v
        got = pprof_stacks(raw)
        if raw.types != ['time'] or raw.default != 'time':
            problems.append(f'sample types {raw.types}')
        if got != dict(want):
            problems.append(f'{len(got)} stacks, want {len(want)}: {sorted(set(got) ^ set(want))[:2]}')
        top = subprocess.run(['go', 'tool', 'pprof', '-top', '-nodecount=3', out], capture_output=True, text=True)
        if 'Type: time' not in top.stdout or not re.search(r'\d+us ', top.stdout):
            problems.append(f'pprof -top does not show microseconds: {top.stdout[:200]!r}')
        # pstats reads it too, in seconds from the microseconds.
        prof = os.path.join(tmp, 'export_stacks.prof')
        r = c.convert(['convert', stacks, prof])
        total = sum(v for _, v in read_folded_lines(stacks))
        if r.returncode or abs(pstats.Stats(prof).total_tt - total / 1e6) > 1e-9:
            problems.append(f'pstats: exit {r.returncode}, total {total} us')
    c.report('torch\'s export_stacks converts: microseconds under its stacks, spaces given back', problems)
    r = c.convert(['convert', '-o', os.path.join(tmp, 'm.pb.gz'), stacks,
                   os.path.join(d, 'lm_train.pt.trace.json.gz')])
    a = subprocess.run([c.binary, 'analyze', stacks], capture_output=True, text=True)
    c.report('folded stacks convert alone; analyze names them and what it reads',
             [] if r.returncode == 1 and b'a file of folded stacks converts alone' in r.stderr and a.returncode == 1 and
             'export_stacks.txt: a file of folded stacks: analyze reads' in a.stderr
             else [f'exit {r.returncode}: {r.stderr[:200]!r}; analyze exit {a.returncode}: {a.stderr[:200]!r}'])


def read_folded_lines(path):
    """(stack, value) for each line, repeats kept, as export_stacks writes one per event."""
    out = []
    for line in open(path, encoding='utf-8'):
        stack, _, value = line.rstrip('\n').rpartition(' ')
        out.append((stack, int(value)))
    return out


def pstats_problems(path, raw, time_type, top):
    """What Python's own pstats reads from a pstats file, against the pprof profile.
    top: per folded frame name, the (calls, time) of its calls from the top level, which
    have no caller (as in cProfile)."""
    import io
    import pstats
    problems = []
    st = pstats.Stats(path, stream=io.StringIO())
    st.sort_stats('cumulative').print_stats(5)
    st.print_callers(5)
    total_ns = sum(round(tt * 1e9) for _, _, tt, _, _ in st.stats.values())
    want = sum(raw.value(smp, time_type) for smp in raw.samples)
    if total_ns != want:
        problems.append(f'{time_type}: total tt {total_ns} ns, pprof total {want}')
    want_calls = sum(raw.value(smp, 'calls') for smp in raw.samples)
    if time_type == 'wall' and st.total_calls != want_calls:
        problems.append(f'nc total {st.total_calls}, pprof calls {want_calls}')
    for func, (cc, nc, tt, ct, callers) in st.stats.items():
        if ct < tt - 1e-12 or cc > nc:
            problems.append(f'{func}: ct {ct} < tt {tt} or cc {cc} > nc {nc}')
        for caller in callers:
            if caller not in st.stats:
                problems.append(f'{func}: caller {caller} has no entry')
        folded_name = (func[2] if func[0] == '~' else f'{func[2]} {func[0]}:{func[1]}').replace(';', ',')
        top_nc, top_tt = top.get(folded_name, (0, 0))
        enc = sum(e[0] for e in callers.values()) + top_nc
        ett = sum(round(e[2] * 1e9) for e in callers.values()) + top_tt
        if enc != nc or ett != round(tt * 1e9):
            problems.append(f'{func}: caller edges and top level: nc {enc} tt {ett}, the function nc {nc} '
                            f'tt {round(tt * 1e9)}')
        if len(problems) > 5:
            break
    return problems


def pstats_checks(c, testdata, tmp):
    """convert --format pstats, loaded by Python's pstats: total tt is the pprof wall total
    (gpu with --sample-type gpu), nc the calls, ct >= tt, cc <= nc, caller edges add up to
    their callee and every caller has an entry."""
    d = os.path.join(testdata, 'real', 'torch211')
    for name in sorted(f for f in os.listdir(d) if f.endswith('.pt.trace.json.gz')):
        trace = os.path.join(d, name)
        pb = os.path.join(tmp, 'pstats_ref.pb.gz')
        c.convert(['convert', trace, pb])
        raw = Raw(pb)
        problems = []
        for t in ['wall'] + (['gpu'] if 'gpu' in raw.types else []):
            top = {}  # one-frame stacks of the folded output: calls from the top level
            for kind, i in (('calls', 0), (t, 1)):
                folded = os.path.join(tmp, 'top.folded')
                c.convert(['convert', '--folded-root', 'none', '--sample-type', kind, trace, folded])
                for stack, v in read_folded(folded).items():
                    if ';' not in stack:
                        pair = list(top.get(stack, (0, 0)))
                        pair[i] += v
                        top[stack] = tuple(pair)
            out = os.path.join(tmp, 'out.prof')
            r = c.convert(['convert', '--sample-type', t, trace, out])
            if r.returncode != 0:
                problems.append(f'{t}: exit {r.returncode}: {r.stderr.decode()[:200]}')
                continue
            problems += pstats_problems(out, raw, t, top)
        c.report(f'pstats of {name} loads in Python and adds up', problems)
    # Recursion by hand: A [0, 100 us) holds B [10, 90) holds A [20, 80) on one thread.
    rec = os.path.join(tmp, 'recursion.json')
    with open(rec, 'w') as f:
        json.dump({'traceEvents': [
            {'ph': 'X', 'cat': 'cpu_op', 'name': n, 'pid': 1, 'tid': 1, 'ts': ts, 'dur': dur}
            for n, ts, dur in (('A', 0, 100), ('B', 10, 80), ('A', 20, 60))]}, f)
    out = os.path.join(tmp, 'recursion.prof')
    c.convert(['convert', rec, out])
    import pstats
    st = pstats.Stats(out).stats
    a, b = ('~', 0, 'A'), ('~', 0, 'B')
    want = {a: (1, 2, 80e-6, 100e-6, {b: (1, 0, 60e-6, 0.0)}), b: (1, 1, 20e-6, 80e-6, {a: (1, 1, 20e-6, 80e-6)})}
    c.report('pstats counts a recursive call as no primitive call and its time once',
             [] if st == want else [f'{st}'])
    r = c.convert(['convert', '--format', 'pstats', '--sample-type', 'alloc_space',
                   os.path.join(d, 'lm_train.pt.trace.json.gz'), os.path.join(tmp, 'x.out')])
    c.report('pstats of a non-time sample type is a usage error', [] if r.returncode == 2 else [f'exit {r.returncode}'])


if __name__ == '__main__':
    sys.exit(main())
