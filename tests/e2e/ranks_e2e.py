#!/usr/bin/env python3
"""End-to-end tests of `torch2pprof analyze` over several ranks.

HTA (Holistic Trace Analysis) is not installable here, so its two definitions are
ported below from facebookresearch/HolisticTraceAnalysis at commit 0c2146a:
- get_temporal_breakdown (hta/analyzers/breakdown_analysis.py, idle_time_per_rank and
  _get_idle_time_for_kernels): over a rank's GPU events (those with a stream: kernels,
  memcpy, memset), kernel_time = last end - first start, idle = kernel_time - union of
  all, compute = union of COMPUTATION kernels, non_compute = the rest;
- get_comm_comp_overlap (hta/analyzers/communication_analysis.py): the time where the
  union of COMMUNICATION kernels and the union of COMPUTATION kernels are both running,
  over the length of the communication union;
with get_kernel_type (hta/utils/utils.py): "ncclKernel" in the name is communication,
"Memcpy" or "Memset" memory, anything else computation. pandas is replaced by sorted
integer intervals; times are integer nanoseconds from the decimal text.

They are compared exactly with `--format json` on the two DDP ranks of the torch 2.11
traces and on a synthetic 8-rank job (written here) whose NCCL kernels overlap compute
and whose rank 5 is slow; with its exactly known stragglers. A directory gives the
same report as its files; CSV agrees with JSON; text fits 120 columns.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import bisect
import csv
import gzip
import io
import json
import re
import shutil
import os
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally, ns  # noqa: E402


def hta_kernel_type(name):
    if 'ncclKernel' in name:
        return 'COMMUNICATION'
    if 'Memcpy' in name or 'Memset' in name:
        return 'MEMORY'
    return 'COMPUTATION'


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(spans):
    return sum(e - s for s, e in spans)


def overlap(a, b):
    """Length of the intersection of two unions (HTA's running-status sweep, as intervals)."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def hta(path, without_sync=False):
    """HTA's numbers for one rank; without_sync: leave out cuda_sync events (the README's
    one difference: they carry a stream, and HTA at 0c2146a counts them as compute)."""
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        doc = json.load(f, parse_float=Decimal, parse_int=Decimal)
    events = doc['traceEvents'] if isinstance(doc, dict) else doc
    gpu = [e for e in events if e.get('ph') == 'X' and isinstance(e.get('args'), dict) and 'stream' in e['args']
           and ns(e['dur']) > 0 and not (without_sync and e.get('cat') == 'cuda_sync')]
    spans = [(ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in gpu]
    kinds = [hta_kernel_type(e['name']) for e in gpu]
    all_ = union(spans)
    comp = union([s for s, k in zip(spans, kinds) if k == 'COMPUTATION'])
    comm = union([s for s, k in zip(spans, kinds) if k == 'COMMUNICATION'])
    kernel_time = all_[-1][1] - all_[0][0]
    idle = kernel_time - length(all_)
    return {'kernel_time': kernel_time, 'idle': idle, 'compute': length(comp),
            'non_compute': kernel_time - length(comp) - idle,
            'overlap': (overlap(comm, comp), length(comm))}


def synthetic(rank, slow):
    """One rank of an 8-rank NCCL job: per step a gemm, and an all_reduce kernel that
    overlaps its second half. Rank 5's gemm takes 300us longer and everything after it
    moves with it; its host all_reduce waits least (it arrives last)."""
    ev = []
    for k in range(3):
        s, d = k * 3000, (300 if slow else 0)
        ev.append({'ph': 'X', 'cat': 'cpu_op', 'name': f'ProfilerStep#{k + 1}', 'pid': 10, 'tid': 1, 'ts': s,
                   'dur': 1000 + d})
        ev.append({'ph': 'X', 'cat': 'cuda_runtime', 'name': 'cudaLaunchKernel', 'pid': 10, 'tid': 1, 'ts': s + 10,
                   'dur': 5, 'args': {'correlation': 10 * k + 1}})
        ev.append({'ph': 'X', 'cat': 'kernel', 'name': 'sm90_xmma_gemm', 'pid': 0, 'tid': 7, 'ts': s + 20,
                   'dur': 600 + d, 'args': {'correlation': 10 * k + 1, 'device': 0, 'stream': 7}})
        ev.append({'ph': 'X', 'cat': 'cpu_op', 'name': 'nccl:all_reduce', 'pid': 10, 'tid': 1, 'ts': s + 300 + d,
                   'dur': 40 if slow else 400})
        ev.append({'ph': 'X', 'cat': 'cuda_runtime', 'name': 'cudaLaunchKernel', 'pid': 10, 'tid': 1,
                   'ts': s + 305 + d, 'dur': 5, 'args': {'correlation': 10 * k + 2}})
        ev.append({'ph': 'X', 'cat': 'kernel', 'name': 'ncclKernel_AllReduce_RING_LL_Sum_float', 'pid': 0,
                   'tid': 13, 'ts': s + 320.5 + d, 'dur': 600.25,
                   'args': {'correlation': 10 * k + 2, 'device': 0, 'stream': 13}})
    return {'distributedInfo': {'backend': 'nccl', 'rank': rank, 'world_size': 8}, 'traceEvents': ev}


def dump_exact(obj, f):
    """JSON with every Decimal written as its own digits (the times stay exact)."""
    text = json.dumps(obj, default=lambda d: f'@@{d}@@')
    f.write(re.sub(r'"@@(-?[0-9.Ee+-]+)@@"', r'\1', text))


def stretch(trace, cuts, gap, waiting=()):
    """Time `gap` inserted at each cut point: an event starting at or after a cut moves by
    the gap, one that spans it lasts the gap longer; so does an event of `waiting` (ids)
    that starts at a cut: a collective that waits there for a late rank."""
    cuts = sorted(cuts)
    for e in trace['traceEvents']:
        if 'ts' not in e or e.get('ph') == 'M':
            continue
        t = e['ts']
        before_start = sum(1 for c in cuts if (c < t if id(e) in waiting else c <= t))
        if 'dur' in e:
            end = t + e['dur']
            before_end = sum(1 for c in cuts if c < end)
            e['dur'] = e['dur'] + gap * (before_end - before_start)
        e['ts'] = t + gap * before_start


def late_rank_set(source, work, late, gap, ranks=4):
    """A straggler set from one real DDP rank: `ranks` copies with distinct ranks; in each
    step the late rank starts its forward `gap` later, and every other rank waits `gap`
    at the start of its first collective of the step, as a late rank makes it."""
    paths = []
    for r in range(ranks):
        t = json.load(gzip.open(source, 'rt'), parse_float=Decimal)
        t['distributedInfo'] = dict(t['distributedInfo'], rank=r, world_size=ranks)
        ev = t['traceEvents']
        steps = sorted((e['ts'], e['ts'] + e['dur']) for e in ev if e.get('ph') == 'X' and
                       str(e.get('name', '')).startswith('ProfilerStep#') and e.get('cat') == 'user_annotation')

        def first_in_step(name, cats):
            out = []
            for s0, s1 in steps:
                inside = sorted(e['ts'] for e in ev if e.get('ph') == 'X' and e.get('name') == name and
                                e.get('cat') in cats and s0 <= e['ts'] < s1)
                out.append(inside[0])
            return out
        if r == late:
            stretch(t, first_in_step('DistributedDataParallel.forward', ('cpu_op', 'user_annotation')), gap)
        else:
            firsts = []
            for s0, s1 in steps:
                firsts.append(min((e for e in ev if e.get('ph') == 'X' and e.get('name') == 'gloo:all_reduce' and
                                   e.get('cat') == 'user_annotation' and s0 <= e['ts'] < s1), key=lambda e: e['ts']))
            stretch(t, [c['ts'] for c in firsts], gap, {id(c) for c in firsts})
        p = os.path.join(work, f'late_rank{r}.pt.trace.json')
        with open(p, 'w') as f:
            dump_exact(t, f)
        paths.append(p)
    return paths


def us_text(v):
    """Integer ns as Kineto's microseconds with three decimals, exactly."""
    return ('-' if v < 0 else '') + f'{abs(v) // 1000}.{abs(v) % 1000:03d}'


class RankCopies:
    """Many ranks made from real DDP ranks, fast enough for hundreds: each source is read
    once, its events kept as JSON text with their times as integer ns; a copy gets its own
    rank and, per step, a gap before its forward and a wait at the start of its first
    all-reduce (stretch's rules), then is written as text."""

    def __init__(self, sources):
        self.sources = []
        for path in sources:
            doc = json.load(gzip.open(path, 'rt'), parse_float=Decimal)
            events = doc.pop('traceEvents')
            templates, ts, dur = [], [], []
            for e in events:
                timed = 'ts' in e and e.get('ph') != 'M'
                ts.append(ns(e['ts']) if timed else None)
                dur.append(ns(e['dur']) if timed and 'dur' in e else None)
                t = dict(e)
                if timed:
                    t['ts'] = '@T@'
                    if 'dur' in e:
                        t['dur'] = '@D@'
                buf = io.StringIO()
                dump_exact(t, buf)
                templates.append(buf.getvalue())
            steps = sorted((ts[i], ts[i] + dur[i]) for i, e in enumerate(events) if e.get('ph') == 'X' and
                           str(e.get('name', '')).startswith('ProfilerStep#') and e.get('cat') == 'user_annotation')

            def first(name, cats, s0, s1):
                return min((i for i, e in enumerate(events) if e.get('ph') == 'X' and e.get('name') == name and
                            e.get('cat') in cats and s0 <= ts[i] < s1), key=lambda i: ts[i])
            forwards = [ts[first('DistributedDataParallel.forward', ('cpu_op', 'user_annotation'), *s)] for s in steps]
            reduces = [first('gloo:all_reduce', ('user_annotation',), *s) for s in steps]
            self.sources.append((doc, templates, ts, dur, forwards, reduces))

    @staticmethod
    def stretch(ts, dur, cuts, gap, waiting=()):
        cuts = sorted(cuts)
        for i, t in enumerate(ts):
            if t is None:
                continue
            before = bisect.bisect_left(cuts, t) if i in waiting else bisect.bisect_right(cuts, t)
            if dur[i] is not None:
                dur[i] += gap * (bisect.bisect_left(cuts, t + dur[i]) - before)
            ts[i] = t + gap * before

    def write(self, path, source, rank, world, gap_ns, wait_ns):
        doc, templates, ts0, dur0, forwards, reduces = self.sources[source]
        ts, dur = list(ts0), list(dur0)
        self.stretch(ts, dur, forwards, gap_ns)
        self.stretch(ts, dur, [ts[i] for i in reduces], wait_ns, set(reduces))
        head = dict(doc, distributedInfo=dict(doc['distributedInfo'], rank=rank, world_size=world))
        buf = io.StringIO()
        dump_exact(head, buf)
        text = buf.getvalue()
        parts = [text[:-1], ', "traceEvents": [']
        for i, t in enumerate(templates):
            if ts[i] is not None:
                t = t.replace('"@T@"', us_text(ts[i]), 1)
                if dur[i] is not None:
                    t = t.replace('"@D@"', us_text(dur[i]), 1)
            parts.append(t if i == 0 else ',\n' + t)
        parts.append(']}\n')
        with open(path, 'w') as f:
            f.write(''.join(parts))


class Checks(Tally):
    def __init__(self, binary):
        super().__init__()
        self.binary = binary

    def analyze(self, *args):
        r = subprocess.run([self.binary, 'analyze'] + list(args), capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f'analyze {args[:3]}: exit {r.returncode}: {r.stderr[-300:]}')
        return r.stdout

    def sync_difference(self, trace):
        """HTA's alexnet trace has 41 cuda_sync events on its streams: with them left
        out, HTA's definitions give our numbers; with them, HTA's compute is larger."""
        with tempfile.TemporaryDirectory() as tmp:  # the report over ranks: two files, one a copy
            copy = os.path.join(tmp, 'copy.' + os.path.basename(trace))
            shutil.copyfile(trace, copy)
            got = json.loads(self.analyze('--format', 'json', trace, copy), parse_float=Decimal)['ranks'][0]
        ours = (ns(got['gpu_span_us']), ns(got['gpu_idle_us']), ns(got['compute_us']), ns(got['non_compute_us']))
        problems = []
        for without_sync, same in ((True, True), (False, False)):
            h = hta(trace, without_sync)
            theirs = (h['kernel_time'], h['idle'], h['compute'], h['non_compute'])
            if (theirs == ours) != same:
                problems.append(f'without_sync={without_sync}: HTA {theirs}, ours {ours}')
        self.report('alexnet: the one documented difference from HTA is cuda_sync', problems)

    def compare_with_hta(self, name, traces):
        j = json.loads(self.analyze('--format', 'json', *traces), parse_float=Decimal)
        problems = []
        by_rank = {r['rank']: r for r in j['ranks']}
        for i, path in enumerate(traces):
            want = hta(path)
            rank = json.load(gzip.open(path, 'rt') if path.endswith('.gz') else open(path)).get(
                'distributedInfo', {}).get('rank', i)
            got = by_rank[rank]
            pairs = [('gpu_span_us', 'kernel_time'), ('gpu_idle_us', 'idle'), ('compute_us', 'compute'),
                     ('non_compute_us', 'non_compute')]
            for ours, theirs in pairs:
                if ns(got[ours]) != want[theirs]:
                    problems.append(f'rank {rank} {ours} {got[ours]} us, HTA {theirs} {want[theirs]} ns')
            o, c = want['overlap']
            if ns(got['comm_kernel_us']) != c:
                problems.append(f'rank {rank} comm kernels {got["comm_kernel_us"]} us, HTA {c} ns')
            ratio = got['comm_compute_overlap']
            if c == 0 and ratio is not None:
                problems.append(f'rank {rank}: overlap {ratio} without communication kernels (HTA: 0/0)')
            if c and abs(float(ratio) - o / c) > 1e-6:
                problems.append(f'rank {rank}: overlap {ratio}, HTA {o / c}')
        self.report(f'{name}: temporal breakdown and comm/compute overlap equal HTA\'s', problems)
        return j

    def synthetic_job(self, work):
        paths = []
        for r in range(8):
            p = os.path.join(work, f'job_rank{r}.pt.trace.json')
            with open(p, 'w') as f:
                json.dump(synthetic(r, r == 5), f)
            paths.append(p)
        j = self.compare_with_hta('synthetic 8 ranks', paths)
        problems = []
        # Rank 5: median step 1300us against 1000us (+30%), compute 2700us against 1800us (+50%),
        # set apart by its kernel part (900us against 600us per step); the other parts move with it.
        got = [(s['rank'], s['metric'], s['excess'], s['part'], s['part_delta_us']) for s in j['slow_ranks']]
        want = [(5, 'compute', Decimal('0.5'), 'kernel', Decimal('300')),
                (5, 'step_time', Decimal('0.3'), 'kernel', Decimal('300'))]
        if got != want:
            problems.append(f'stragglers {got}')
        ar = [c for c in j['collectives'] if c['name'] == 'nccl:all_reduce'][0]
        if ar['min_rank'] != 5 or ar['calls'] != [3] * 8 or Decimal(ar['spread_us']) != 3 * (400 - 40):
            problems.append(f'nccl:all_reduce {ar}')
        steps = j['step_alignment']
        if [(s['name'], s['slowest_rank'], Decimal(s['spread_us'])) for s in steps] != [
                (f'ProfilerStep#{k}', 5, Decimal(300)) for k in (1, 2, 3)]:
            problems.append(f'step alignment {steps}')
        # The overlap: the all_reduce kernel [320.5, 920.75) against the gemm [20, 620): 299.5 of 600.25.
        for r in (j['ranks'][0], j['ranks'][5]):
            if abs(float(r['comm_compute_overlap']) - 299.5 / 600.25) > 1e-6:
                problems.append(f'rank {r["rank"]} overlap {r["comm_compute_overlap"]}')
        self.report('synthetic 8 ranks: the slow rank, its collectives and steps', problems)

        # A directory is its traces; CSV is JSON's numbers; text fits 120 columns.
        problems = []
        if self.analyze('--format', 'json', work) != self.analyze('--format', 'json', *paths):
            problems.append('analyze DIR differs from analyze FILES')
        rows = list(csv.DictReader(io.StringIO(self.analyze('--format', 'csv', *paths))))
        if [(int(r['rank']), Decimal(r['step_median_us'])) for r in rows] != [
                (r['rank'], Decimal(r['step_median_us'])) for r in j['ranks']]:
            problems.append('CSV ranks differ from JSON')
        long = list(csv.DictReader(io.StringIO(self.analyze('--format', 'csv', '--table', 'collectives', *paths))))
        if len(long) != 8 * len(j['collectives']):
            problems.append(f'CSV collectives: {len(long)} rows')
        text = self.analyze(*paths)
        wide = [line for line in text.split('\n') if len(line) > 120]
        if wide or 'Straggler' not in text:
            problems.append(f'text: {len(wide)} lines over 120 columns')
        self.report('a directory, CSV and text agree with JSON', problems)
        return paths


    def late_rank(self, source, work):
        """Synchronous data parallelism equalises step time: a late rank shows as the
        one the others wait for. 20 ms before rank 2's forward in each step, and 20 ms
        longer first collectives on ranks 0, 1 and 3, as a real late rank causes."""
        gap_us = 20000
        paths = late_rank_set(source, work, late=2, gap=Decimal(gap_us))
        j = json.loads(self.analyze('--format', 'json', *paths), parse_float=Decimal)
        problems = []
        late = j['stragglers']
        if len(late) != 1:
            problems.append(f'late ranks {late}')
        else:
            l = late[0]
            if l['rank'] != 2 or l['waiters'] != '0 1 3' or l['collective'] != 'gloo:all_reduce':
                problems.append(f'late rank {l}')
            if abs(Decimal(l['waited_us']) - gap_us) > gap_us / 100:
                problems.append(f'waited {l["waited_us"]} us per step, inserted {gap_us}')
            if l['part'] != 'other' or abs(Decimal(l['part_delta_us']) - gap_us) > gap_us / 100:
                problems.append(f'its part {l["part"]} +{l["part_delta_us"]} us, inserted other +{gap_us}')
        waits = [Decimal(r['wait_us']) for r in j['ranks']]
        if waits[2] != 0 or any(abs(w - gap_us) > gap_us / 100 for k, w in enumerate(waits) if k != 2):
            problems.append(f'waits per step {waits}')
        if j['slow_ranks']:  # every rank's step is as long: no slow rank by step time
            problems.append(f'slow ranks {j["slow_ranks"]}')
        text = self.analyze(*paths)
        line = 'rank 2 arrives last: ranks 0 1 3 wait 20.0ms per step for it in gloo:all_reduce;\n' \
               '  its step spends other +20.0ms per step above the other ranks\' median'
        if line not in text:
            problems.append('text: ' + ' | '.join(x for x in text.split('\n') if 'arrives' in x or 'none' in x))
        self.report('a late rank: named with its waiters, the wait and its part', problems)
        return paths

    def real_sets(self, d):
        """Recorded on a GPU (scripts/record_gpu_testdata.py): four DDP ranks over gloo on one
        H200, rank 2 sleeping 30 ms before each forward; and the same job with rank 1 on twice
        the batch. Real timing varies, so the amounts are checked within a few percent."""
        late = [os.path.join(d, f'ddp_gloo_4ranks_late2_rank{r}.pt.trace.json.gz') for r in range(4)]
        j = json.loads(self.analyze('--format', 'json', *late), parse_float=Decimal)
        problems = []
        l = j['stragglers'][0] if len(j['stragglers']) == 1 else {}
        if (l.get('rank'), l.get('waiters'), l.get('collective'), l.get('part')) != (2, '0 1 3', 'gloo:all_reduce',
                                                                                     'other'):
            problems.append(f'late ranks {j["stragglers"]}')
        elif abs(Decimal(l['part_delta_us']) - 30000) > 30000 * Decimal('0.05'):
            problems.append(f'its other part +{l["part_delta_us"]} us per step, slept 30000')
        elif not 30000 * Decimal('0.95') <= Decimal(l['waited_us']) <= 30000 * Decimal('1.2'):
            problems.append(f'the others wait {l["waited_us"]} us per step for 30 ms of sleep')
        self.report('real 4 ranks, rank 2 sleeping 30 ms: the straggler, its waiters and its part', problems)
        uneven = [os.path.join(d, f'ddp_gloo_4ranks_uneven1_rank{r}.pt.trace.json.gz') for r in range(4)]
        j = json.loads(self.analyze('--format', 'json', *uneven), parse_float=Decimal)
        slow = [(x['rank'], x['metric'], x['part']) for x in j['slow_ranks']]
        self.report('real 4 ranks, rank 1 on twice the batch: a slow rank in compute, no late rank',
                    [] if slow == [(1, 'compute', 'kernel')] and not j['stragglers'] else
                    [f'slow {slow}, late {j["stragglers"]}'])
        return late

    def run(self, *args, ok=True):
        r = subprocess.run([self.binary] + list(args), capture_output=True, text=True)
        if ok and r.returncode:
            raise RuntimeError(f'{args[:3]}: exit {r.returncode}: {r.stderr[-300:]}')
        return r

    def map_summaries(self, traces, out_dir):
        """The map as the README runs it: xargs -P 2, one summarize per trace."""
        os.makedirs(out_dir, exist_ok=True)
        listing = ''.join(t + '\n' for t in traces)
        cmd = f'xargs -P 2 -I{{}} sh -c \'"$0" summarize "$1" -o "$2/$(basename "$1").summary.json"\' ' \
              f'"{self.binary}" {{}} "{out_dir}"'
        r = subprocess.run(cmd, shell=True, input=listing, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f'map: exit {r.returncode}: {r.stderr[-300:]}')
        return [os.path.join(out_dir, os.path.basename(t) + '.summary.json') for t in traces]

    def summaries(self, name, traces, work, formats):
        """The reduce over summaries is the report over their traces: stdout and stderr,
        byte for byte, in every format asked; alone, and mixed with traces."""
        sums = self.map_summaries(traces, os.path.join(work, 'sum'))
        mixed = [s if k % 2 else t for k, (t, s) in enumerate(zip(traces, sums))]
        problems = []
        sizes = [os.path.getsize(s) for s in sums]
        for args in formats:
            want = self.run('analyze', *args, *traces)
            for label, inputs in (('summaries', sums), ('mixed', mixed)):
                got = self.run('analyze', *args, *inputs)
                if (got.stdout, got.stderr) != (want.stdout, want.stderr):
                    problems.append(f'{label} {" ".join(args)}: the report differs from the traces\'')
        self.report(f'{name}: analyze over summaries (largest {max(sizes)} bytes) is analyze over the traces',
                    problems)
        return sums

    def summary_errors(self, trace, work):
        problems = []
        good = os.path.join(work, 'one.summary.json')
        self.run('summarize', trace, '-o', good)
        one = self.run('analyze', good)
        if 'Ranks' not in one.stdout:
            problems.append('one summary alone: no report over ranks')
        text = open(good).read()
        doc = json.loads(text)
        cases = {
            'truncated': (text[:len(text) // 2], 'invalid JSON', True),
            'format 2': (text.replace('"torch2pprof_summary":1', '"torch2pprof_summary":2', 1), 'format 2', False),
            'bad call': (json.dumps(dict(doc, calls=[[len(doc['collectives']), 0, 5]])), 'call 0', False),
            'negative time': (json.dumps(dict(doc, gpu_idle_ns=-1)), 'gpu_idle_ns', False),
        }
        for case, (body, words, offset) in cases.items():
            p = os.path.join(work, case.replace(' ', '_') + '.summary.json')
            with open(p, 'w') as f:
                f.write(body)
            r = self.run('analyze', p, trace, ok=False)
            line = r.stderr.strip()
            if r.returncode != 1 or r.stdout or '\n' in line or p not in line or words not in line or \
                    (offset and 'byte' not in line):
                problems.append(f'{case}: exit {r.returncode}: {line[:200]}')
        plain = os.path.join(work, 'plain.pt.trace.json')  # a trace named like a summary's output
        with gzip.open(trace, 'rb') as f, open(plain, 'wb') as g:
            g.write(f.read())
        other = os.path.join(work, 'notes.json')
        with open(other, 'w') as f:
            f.write('{"mine": 1}\n')
        for args, status in ((['summarize', trace, '-o', os.path.join(work, 'x.txt')], 2),
                             (['summarize'], 2),
                             (['summarize', trace, trace], 2),
                             (['summarize', plain, '-o', plain], 3),
                             (['summarize', trace, '-o', other], 3)):
            r = self.run(*args, ok=False)
            if r.returncode != status or not r.stderr.startswith('torch2pprof: '):
                problems.append(f'{" ".join(args[1:])}: exit {r.returncode}, want {status}')
        # A summary is replaced by summarize without --force, a trace is not.
        r = self.run('summarize', trace, '-o', good, ok=False)
        if r.returncode:
            problems.append(f'summarize over its own summary: exit {r.returncode}')
        self.report('summaries: one alone is a report; broken, newer or hostile ones are one-line errors', problems)

    def many_ranks(self, source_pair, work, n):
        """n ranks made from the two real DDP ranks: rank 77 starts each forward 20 ms late,
        every other rank up to 0.5 ms late and waiting the rest of the 20 ms in its first
        all-reduce of the step. The map with xargs -P 2, then the reduce."""
        copies = RankCopies(source_pair)
        late, big = 77 % n, 20_000_000
        traces, gaps = [], {}
        for r in range(n):
            p = os.path.join(work, f'rank{r:04d}.pt.trace.json')
            gaps[r] = big if r == late else (r * 37 % 11) * 50_000
            copies.write(p, r % 2, r, n, gaps[r], 0 if r == late else big - gaps[r])
            traces.append(p)
        self.summaries(f'{n} ranks made from 2', traces, work, [[], ['--format', 'json']])
        j = json.loads(self.analyze('--format', 'json', *traces), parse_float=Decimal)
        problems = []
        l = j['stragglers'][0] if j['stragglers'] else {}
        expect = sorted(big - g for r, g in gaps.items() if r != late)[(n - 1) // 2] / 1000
        if l.get('rank') != late or len(l.get('waiters', '').split()) != n - 1:
            problems.append(f'late {str(l)[:200]}')
        elif abs(Decimal(l['waited_us']) - Decimal(expect)) > Decimal(expect) / 100:
            problems.append(f'waited {l["waited_us"]} us per step, inserted a median of {expect}')
        text = self.analyze(*traces)
        if f'rank {late} arrives last: {n - 1} ranks wait' not in text or any(len(x) > 120 for x in text.split('\n')):
            problems.append('text: ' + ' | '.join(x for x in text.split('\n') if 'arrives' in x))
        self.report(f'{n} ranks: the late one among them, its {n - 1} waiters and the inserted wait', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--many-ranks', type=int, default=0,
                    help='only the map and reduce over this many ranks made from the DDP pair (e2e_ranks_many)')
    a = ap.parse_args()
    c = Checks(a.binary)
    d = os.path.join(a.testdata, 'real', 'torch211')
    ddp = [os.path.join(d, f'ddp_gloo_2ranks_rank{r}.pt.trace.json.gz') for r in (0, 1)]
    alexnet = os.path.join(a.testdata, 'real',
                           'hta__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz')
    if a.many_ranks:
        with tempfile.TemporaryDirectory() as work:
            try:
                c.many_ranks(ddp, work, a.many_ranks)
            except Exception as e:
                c.report('check', [f'{type(e).__name__}: {e}'])
        return c.summary()
    work = tempfile.mkdtemp()
    for sub in ('job', 'late', 'late_map', 'real', 'ddp', 'job_map', 'errors'):
        os.makedirs(os.path.join(work, sub))
    csv_tables = [['--format', 'csv', '--table', t] for t in
                  ('ranks', 'spreads', 'stragglers', 'slow_ranks', 'collectives', 'step_alignment')]
    every = [[], ['--format', 'json']] + csv_tables
    checks = (
        lambda: c.compare_with_hta('DDP gloo 2 ranks', ddp),
        lambda: c.sync_difference(alexnet),
        lambda: c.summaries('synthetic 8 ranks', c.synthetic_job(os.path.join(work, 'job')),
                            os.path.join(work, 'job_map'), every),
        lambda: c.summaries('late-rank set', c.late_rank(ddp[0], os.path.join(work, 'late')),
                            os.path.join(work, 'late_map'), every),
        lambda: c.summaries('real 4 ranks', c.real_sets(d), os.path.join(work, 'real'), every),
        lambda: c.summaries('DDP gloo 2 ranks', ddp, os.path.join(work, 'ddp'), every[:3]),
        lambda: c.summary_errors(ddp[0], os.path.join(work, 'errors')),
    )
    for check in checks:
        try:
            check()
        except Exception as e:  # a crash of a check is a failure too
            c.report('check', [f'{type(e).__name__}: {e}'])
    for args in (['--group-by', 'shape'], ['--format', 'csv', '--table', 'operators']):
        r = subprocess.run([a.binary, 'analyze'] + args + ddp, capture_output=True, text=True)
        ok = r.returncode == 2 and r.stderr.startswith('torch2pprof: ') and r.stdout == ''
        c.report(f'several ranks with {" ".join(args)}: usage error', [] if ok else [f'exit {r.returncode}'])
    shutil.rmtree(work, ignore_errors=True)
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
