#!/usr/bin/env python3
"""End-to-end tests of analyze's GPU idle time and kernel launch views against HTA.

HTA (Holistic Trace Analysis) is not installable here, so its two definitions are
ported below from facebookresearch/HolisticTraceAnalysis at commit f4d0062, with pandas
replaced by plain lists and times kept as integer nanoseconds from the decimal text:
- idle time breakdown (hta/analyzers/breakdown_analysis.py, get_idle_time_breakdown and
  _analyze_idle_time_for_stream): the GPU events of a stream (categories kernel,
  gpu_memcpy, gpu_memset and their old spellings, mtia_ccp_events; not cuda_sync) by
  ts; each one's idle interval is its ts less the previous row's end; host wait when
  its runtime event (the CPU event with its correlation) began after that end, else
  kernel wait when the interval is under consecutive_kernel_delay (30 us), else other;
  summed per category (the first row has no interval);
- kernel launch statistics (hta/analyzers/cuda_kernel_analysis.py,
  cuda_kernel_launch_stats): CPU events of names cudaLaunchKernel, cudaLaunchKernelExC,
  cudaMemcpyAsync, cudaMemsetAsync joined with the GPU events of the same correlation;
  launch delay = GPU ts - CPU ts - CPU dur, clipped at 0;
- queue length (hta/analyzers/trace_counters.py, _get_queue_length_time_series_for_rank
  and get_queue_length_summary): per stream, +1 at each launch call's ts and -1 at its
  GPU event's ts, merged by ts and summed; the summary describes the values.
- kernel breakdown by type (hta/analyzers/breakdown_analysis.py, get_gpu_kernel_breakdown
  with include_memory_kernels=True, and _get_gpu_kernel_type_time; hta/utils/utils.py
  get_kernel_type and merge_kernel_intervals; the name patterns of hta/common/types.py):
  each GPU event typed by its name, each type's intervals merged, +bit at each merged
  start and -bit at its end swept in time order, each stretch to the set of bits open,
  named HTA's way ("COMPUTATION overlapping MEMORY"). HTA sweeps a rank's devices as one;
  torch2pprof each device, so the port groups by the event's pid (its device);
- temporal breakdown (hta/analyzers/breakdown_analysis.py, get_temporal_breakdown and
  _get_idle_time_for_kernels) and comm/compute overlap
  (hta/analyzers/communication_analysis.py, get_comm_comp_overlap): the GPU events
  merged; their span from the first start to the last end, the merged computation
  kernels (typed as above), the rest of the merged events, and the span's idle rest; the
  merged communication kernels and the time both run; per device (pid) as the kernel
  breakdown;
- (not HTA's) collectives by message, from the NCCL kernels' "Collective name", "In/Out
  msg nelems", "dtype" and "Group size", sized and timed as nccl-tests does;
- memory bandwidth (hta/analyzers/trace_counters.py, _get_memory_bw_time_series_for_rank
  and get_memory_bw_summary): the memory events (get_memory_kernel_type: names starting
  Memcpy or Memset) with their "memory bandwidth (GB/s)", +bandwidth at ts and -bandwidth
  at ts + dur (dur 0 rounded up to 1 us), summed in ts order per kind; the summary
  describes the positive points. torch2pprof's kinds are the full names (the memory kind
  is what tells pageable from pinned), so the port groups by the full name too, and
  compares the count of copies per HTA kind (the 11-character prefix) and the largest
  concurrent bandwidth per full kind; at one instant the port lets ends go first (HTA's
  unstable sort leaves it open), and the bandwidth is bytes / duration from the trace
  text rather than the rounded float Kineto writes beside it.

The documented differences (docs/reference.md) are applied to the port on top, each
named where it is: torch2pprof's launch statistics count the launch calls that HTA's
own get_runtime_launch_events_mask (hta/common/trace_symbol_table.py) names, which its
launch statistics narrow to four (the driver's cuLaunchKernel of torch.compile's Triton
kernels among those left out); measures a gap from the latest end of the stream's work so far (HTA: the
previous row's end, which makes overlapping work negative idle); and skips device
events of zero duration. On streams where those make no difference the plain port must
agree exactly, so the test also checks that the differences are the only ones.

Compared exactly with `--format json` on every torch 2.11 trace and HTA trace in
testdata/ (and in ../shared/traces where it exists). Percentiles by nearest rank.

Prints one line per check and 'N passed, N failed' last.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Tally, ns, read_events, as_text  # noqa: E402

GPU_CATS = {'kernel', 'Kernel', 'gpu_memset', 'Memset', 'gpu_memcpy', 'Memcpy', 'mtia_ccp_events'}
HTA_LAUNCH = {'cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync'}
# HTA's get_runtime_launch_events_mask: the launch calls its queue length counts.
MASK_LAUNCH = HTA_LAUNCH | {'cuLaunchKernel', 'cuLaunchKernelEx', 'runFunction - job_prep_and_submit_for_execution',
                            'hipLaunchKernel', 'hipExtModuleLaunchKernel', 'hipMemsetAsync', 'hipMemcpyAsync',
                            'hipMemcpyWithStream'}
CONSECUTIVE_KERNEL_DELAY = 30_000  # ns: HTA's default of 30 (us)


def gpu_events(evs):
    out = []
    for e in evs:
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        if e.get('ph') == 'X' and e.get('cat') in GPU_CATS and 'stream' in a and 'ts' in e and 'dur' in e:
            out.append(e)
    return out


def runtime_start(evs):
    """correlation -> ts of the CPU event that has it (HTA's index_correlation,
    hta/common/trace.py transform_correlation_to_index: any event off the streams). A CPU
    event is one that is no GPU event: ROCm's runtime calls carry a stream argument too
    ("0x0"), which HTA's stream == -1 test would miss."""
    out = {}
    for e in evs:
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        if e.get('ph') == 'X' and e.get('cat') not in GPU_CATS and a.get('correlation', -1) != -1 and 'ts' in e:
            out[a['correlation']] = ns(e['ts'])
    return out


def idle_breakdown(evs, documented):
    """(pid, stream) -> [host wait, kernel wait, other] ns; documented: with the
    documented differences (latest end, no negative gaps, no zero-length events)."""
    starts = runtime_start(evs)
    streams = {}
    for e in gpu_events(evs):
        if documented and ns(e['dur']) <= 0:
            continue
        key = (as_text(e['pid']), as_text(e['tid']))
        streams.setdefault(key, []).append((ns(e['ts']), ns(e['ts']) + ns(e['dur']),
                                            starts.get(e['args'].get('correlation'))))
    out = {}
    for key, rows in streams.items():
        rows.sort(key=lambda r: (r[0], r[1]) if documented else r[0])
        sums = [0, 0, 0]
        prev_end = None
        for ts, end, runtime in rows:
            if prev_end is not None:
                interval = ts - prev_end
                if not documented or interval > 0:
                    if runtime is not None and runtime > prev_end:
                        sums[0] += interval
                    elif interval < CONSECUTIVE_KERNEL_DELAY:
                        sums[1] += interval
                    else:
                        sums[2] += interval
            prev_end = max(prev_end, end) if documented and prev_end is not None else end
        out[key] = sums
    return out


def launch_stats(evs, documented):
    names = MASK_LAUNCH if documented else HTA_LAUNCH
    cpu = {}
    for e in evs:
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        if e.get('ph') == 'X' and e.get('name') in names and 'correlation' in a and e.get('cat') not in GPU_CATS:
            cpu[a['correlation']] = (ns(e['ts']), ns(e['dur']))
    delays, calls, works = [], [], []
    for e in gpu_events(evs):
        c = cpu.get(e['args'].get('correlation'))
        if c is None:
            continue
        delays.append(max(0, ns(e['ts']) - c[0] - c[1]))
        calls.append(c[1])
        works.append(ns(e['dur']))
    return delays, calls, works


def queue_length(evs):
    """(pid, tid) of the stream -> the queue's values after each change."""
    calls = {}
    for e in evs:
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        if e.get('ph') == 'X' and e.get('name') in MASK_LAUNCH and 'correlation' in a and e.get('cat') not in GPU_CATS:
            calls[a['correlation']] = ns(e['ts'])
    changes = {}
    for e in gpu_events(evs):
        c = calls.get(e['args'].get('correlation'))
        if c is None:
            continue
        key = (as_text(e['pid']), as_text(e['tid']))
        changes.setdefault(key, []).extend([(c, +1), (ns(e['ts']), -1)])
    out = {}
    for key, c in changes.items():
        c.sort()  # by ts; at one instant the start before the launch (HTA's order there is pandas')
        level, values = 0, []
        for _, d in c:
            level += d
            values.append(level)
        out[key] = values
    return out


def nearest_rank(values, q):
    v = sorted(values)
    if not v:
        return 0
    k = max(1, -(-len(v) * q // 100))
    return v[k - 1]


def memory_bandwidth(evs):
    """Full kind -> (count, bytes, peak concurrent GB/s): HTA's memory bandwidth series."""
    kinds = {}
    for e in gpu_events(evs):
        name = e.get('name', '')
        if not isinstance(name, str) or not (name.startswith('Memcpy') or name.startswith('Memset')):
            continue
        a = e['args']
        k = kinds.setdefault(name, [0, 0, []])
        k[0] += 1
        if isinstance(a.get('bytes'), int) and a['bytes'] >= 0:
            k[1] += a['bytes']
            t, d = ns(e['ts']), ns(e['dur'])
            if d > 0:
                bw = Decimal(a['bytes']) / d
                k[2] += [(t, -0, bw), (t + d, -1, -bw)]
    out = {}
    for name, (count, total, points) in kinds.items():
        level, peak = Decimal(0), Decimal(0)
        for _, _, bw in sorted(points, key=lambda p: (p[0], p[1])):
            level += bw
            peak = max(peak, level)
        out[name] = (count, total, peak)
    return out


# Findings that must fire, and must not, on real traces (what each trace is: testdata/README.md).
# A finding fires on the critical path's time its cause holds: decode_loop's 144 waits cost
# nothing there (the host is the long pole even between them: the device works 1% of the
# path), multistream's FP32 matmuls are off the path (its pageable copy is the path).
MUST_FIRE = {'decode_loop': {'launch_bound', 'host_bound'}, 'multistream': {'pageable_copies'},
             'ddp_gloo_2ranks_rank0': {'gloo_cuda'}, 'lm_compile': {'dataloader', 'launch_bound'}}
MUST_NOT = {'lm_train': {'pageable_copies', 'gloo_cuda', 'tensor_cores'}, 'multistream': {'launch_bound', 'tensor_cores'},
            'resnet50_dl': {'pageable_copies', 'gloo_cuda'},
            'decode_loop': {'pageable_copies', 'gloo_cuda', 'synchronizations'}}


DTYPE_BYTES = {'Float': 4, 'Double': 8, 'Half': 2, 'BFloat16': 2, 'Int': 4, 'Long': 8, 'Short': 2, 'Char': 1,
               'Byte': 1, 'Bool': 1}


def collective_sizes(evs):
    """(collective, dtype, group, message bytes) -> (calls, time ns), from the NCCL kernels'
    args, sized as nccl-tests sizes a message (doc/PERFORMANCE.md: all-gather by its
    gathered output, the rest by their input)."""
    out = {}
    for e in evs:
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        if e.get('ph') != 'X' or e.get('cat') != 'kernel' or 'Collective name' not in a or ns(e.get('dur', 0)) <= 0:
            continue
        name = a['Collective name']
        gather = 'allgather' in name.replace('_', '').lower()
        nelems = a.get('Out msg nelems' if gather else 'In msg nelems', -1)
        size = DTYPE_BYTES.get(a.get('dtype'))
        key = (name, a.get('dtype', ''), a.get('Group size', -1), nelems * size if size and nelems >= 0 else -1)
        calls, t = out.get(key, (0, 0))
        out[key] = (calls + 1, t + ns(e['dur']))
    return out


# hta/common/types.py: CommunicateKernelGroupingPattern, MemoryKernelGroupingPattern and
# ComputeKernelGroupingPattern (an inverse match), read with re.match as HTA does.
HTA_COMM = re.compile(r'(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)')
HTA_MEMORY = re.compile(r'(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)')
HTA_NOT_COMPUTE = re.compile(
    r'(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)'
    r'|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)')
HTA_TYPES = ['COMPUTATION', 'COMMUNICATION', 'MEMORY']  # kernel_type_to_analysis, in its order


def hta_kernel_type(name):
    if HTA_COMM.match(name):
        return 'COMMUNICATION'
    if HTA_MEMORY.match(name):
        return 'MEMORY'
    return 'OTHER' if HTA_NOT_COMPUTE.match(name) else 'COMPUTATION'


def merge_intervals(rows):
    """merge_kernel_intervals: sorted by ts, a new group wherever ts passes every end before."""
    out = []
    for ts, end in sorted(rows):
        if out and ts <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([ts, end])
    return out


def kernel_type_time(evs, ours):
    """device (pid) -> {type set's name: ns}: HTA's _get_gpu_kernel_type_time per device.
    With `ours`, the documented difference: an MTIA ccp event is device work of one kind
    (the model's role, by its category), so a dma_request is COMPUTATION and pe_exe is
    counted; HTA types them by name (MEMORY, and OTHER, which it leaves out)."""
    by_device = {}
    for e in gpu_events(evs):
        t = hta_kernel_type(e.get('name', ''))
        if ours and e.get('cat') == 'mtia_ccp_events' and t != 'COMMUNICATION':
            t = 'COMPUTATION'
        if t in HTA_TYPES:
            by_device.setdefault(as_text(e['pid']), {}).setdefault(t, []).append((ns(e['ts']), ns(e['ts']) + ns(e['dur'])))
    out = {}
    for device, types in by_device.items():
        points = []
        for i, t in enumerate(HTA_TYPES):
            for ts, end in merge_intervals(types.get(t, [])):
                points += [(ts, 1 << i), (end, -(1 << i))]
        points.sort(key=lambda p: p[0])
        running, times = 0, {}
        for (t, change), nxt in zip(points, points[1:] + [None]):
            running += change
            if running > 0:
                kind = ' overlapping '.join(n for i, n in enumerate(HTA_TYPES) if running & (1 << i))
                times[kind] = times.get(kind, 0) + nxt[0] - t
        out[device] = {k: v for k, v in times.items() if v}
    return out


def temporal_breakdown(evs, ours):
    """device (pid) -> (span, compute, non-compute, idle, comm, overlap) ns: HTA's
    get_temporal_breakdown (its idle_time_per_rank and _get_idle_time_for_kernels) and
    get_comm_comp_overlap per device: the span from the first merged GPU event's start to
    the last's end, the merged computation kernels, the rest of the merged events, the
    span less them; the merged communication kernels and the time computation ran beside
    them (HTA's running-status sweep). `ours`: as kernel_type_time."""
    by_device = {}
    for e in gpu_events(evs):
        t = hta_kernel_type(e.get('name', ''))
        if ours and e.get('cat') == 'mtia_ccp_events' and t != 'COMMUNICATION':
            t = 'COMPUTATION'
        d = by_device.setdefault(as_text(e['pid']), {'all': [], 'COMPUTATION': [], 'COMMUNICATION': []})
        iv = (ns(e['ts']), ns(e['ts']) + ns(e['dur']))
        d['all'].append(iv)
        if t in d:
            d[t].append(iv)
    out = {}
    for device, d in by_device.items():
        merged = merge_intervals(d['all'])
        span = merged[-1][1] - merged[0][0]
        run = sum(end - ts for ts, end in merged)
        comp = merge_intervals(d['COMPUTATION'])
        comm = merge_intervals(d['COMMUNICATION'])
        points = sorted([(ts, 1) for ts, _ in comp] + [(end, -1) for _, end in comp] +
                        [(ts, 2) for ts, _ in comm] + [(end, -2) for _, end in comm])
        running, both = 0, 0
        for (t, change), nxt in zip(points, points[1:] + [None]):
            running += change
            if running == 3:
                both += nxt[0] - t
        c = sum(end - ts for ts, end in comp)
        out[device] = (span, c, run - c, span - run, sum(end - ts for ts, end in comm), both)
    return out


def micros(v):
    return ns(v)  # JSON writes exact decimal microseconds


class Checks(Tally):
    def __init__(self, binary):
        super().__init__()
        self.binary = binary

    def check(self, trace):
        name = os.path.basename(trace).split('.pt.trace')[0].split('.json')[0]
        r = subprocess.run([self.binary, 'analyze', '--quiet', '--format', 'json', trace], capture_output=True, text=True)
        if r.returncode:
            return self.report(name, [f'exit {r.returncode}: {r.stderr.strip()[:200]}'])
        j = json.loads(r.stdout, parse_float=Decimal)
        evs = [e for e in read_events(trace) if isinstance(e, dict)]
        problems = []

        # Idle time: ours equals the port with the documented differences, and the plain
        # port wherever those change nothing.
        got = sorted([micros(row['host_wait_us']), micros(row['kernel_wait_us']), micros(row['other_us'])]
                     for row in j['idle_time'])
        want = idle_breakdown(evs, True)
        plain = idle_breakdown(evs, False)
        if got != sorted(want.values()):
            problems.append(f'idle per stream {got} != HTA with the documented differences {sorted(want.values())}')
        same = sum(1 for k in want if want[k] == plain.get(k))
        differ = [k for k in want if want[k] != plain.get(k)]
        for k in differ:  # only where a stream's work overlaps or has zero-length events
            rows = sorted((ns(e['ts']), ns(e['ts']) + ns(e['dur'])) for e in gpu_events(evs)
                          if (as_text(e['pid']), as_text(e['tid'])) == k)
            overlaps = any(b[0] < a[1] for a, b in zip(rows, rows[1:])) or any(s == t for s, t in rows)
            if not overlaps:
                problems.append(f'stream {k}: HTA {plain[k]} differs from ours {want[k]} without overlapping work')

        # Launches: count, and each percentile of delay, call and device time.
        delays, calls, works = launch_stats(evs, True)
        kl = j['kernel_launches']
        if kl['count'] != len(delays):
            problems.append(f'launches {kl["count"]}, HTA (with the driver launches) {len(delays)}')
        for key, values in (('launch_delay_us', delays), ('cpu_duration_us', calls), ('gpu_duration_us', works)):
            for q, field in ((50, 'p50'), (90, 'p90'), (99, 'p99'), (100, 'max')):
                if micros(kl[key][field]) != nearest_rank(values, q):
                    problems.append(f'{key} {field}: {kl[key][field]} us, HTA {nearest_rank(values, q)} ns')
        if kl['long_delays'] != sum(1 for d in delays if d > 100_000) or \
                kl['slow_launches'] != sum(1 for c in calls if c > 50_000) or \
                kl['short_kernels'] != sum(1 for c, w in zip(calls, works) if w < c):
            problems.append(f'outliers {kl["long_delays"]}/{kl["slow_launches"]}/{kl["short_kernels"]}')
        # Queue length per stream: the count of changes, their mean and maximum.
        got_q = sorted((r['launches'] * 2, round(float(r['mean']), 2), r['max']) for r in j['queue_length'])
        want_q = sorted((len(v), round(sum(v) / len(v), 2), max(v)) for v in queue_length(evs).values())
        if got_q != want_q:
            problems.append(f'queue length {got_q[:3]} != HTA {want_q[:3]}')
        # Copies and sets: count and bytes per kind, HTA's count per its own kinds, and the
        # largest concurrent bandwidth.
        mem = memory_bandwidth(evs)
        got_m = {r['kind']: (r['count'], r['bytes'], Decimal(r['peak_gb_per_s'])) for r in j['copies']}
        for kind, (count, total, peak) in mem.items():
            if kind not in got_m or got_m[kind][:2] != (count, total) or \
                    abs(got_m[kind][2] - peak) > Decimal('1e-5') * max(peak, 1):
                problems.append(f'copies {kind}: ours {got_m.get(kind)}, HTA {(count, total, peak)}')
        by_prefix = {}
        for kind, (count, _, _) in mem.items():
            by_prefix[kind[:11]] = by_prefix.get(kind[:11], 0) + count
        ours_prefix = {}
        for r in j['copies']:
            ours_prefix[r['kind'][:11]] = ours_prefix.get(r['kind'][:11], 0) + r['count']
        if by_prefix != ours_prefix:
            problems.append(f'copies per HTA kind {ours_prefix} != {by_prefix}')
        # Kernel types: each device's rows as HTA's kernel breakdown; they sum to its busy time.
        want_k = sorted(sorted(d.items()) for d in kernel_type_time(evs, True).values() if d)
        if not any(e.get('cat') == 'mtia_ccp_events' for e in evs) and \
                want_k != sorted(sorted(d.items()) for d in kernel_type_time(evs, False).values() if d):
            problems.append('kernel types: the documented difference changed a trace without MTIA events')
        got_k, busy = {}, {}
        for r in j['kernel_types']:
            got_k.setdefault(r['device'], []).append((r['type'], micros(r['time_us'])))
            busy[r['device']] = micros(r['busy_us'])
        if sorted(sorted(v) for v in got_k.values()) != want_k:
            problems.append(f'kernel types {sorted(got_k.items())[:2]} != HTA {want_k[:2]}')
        for d, rows in got_k.items():
            gpu = [g for g in j['gpu'] if g['device'] == d]
            if sum(t for _, t in rows) != busy[d] or not gpu or micros(gpu[0]['busy_us']) != busy[d]:
                problems.append(f'kernel types of {d} do not sum to its busy time')
        # Temporal breakdown: each device's span, computation, other work and idle, and its
        # communication's overlap with computation, as HTA's.
        want_t = sorted(temporal_breakdown(evs, True).values())
        got_t = sorted((micros(r['span_us']), micros(r['compute_us']), micros(r['non_compute_us']),
                        micros(r['idle_us']), micros(r['comm_us']), micros(r['overlap_us']))
                       for r in j['temporal_breakdown'])
        if got_t != want_t:
            problems.append(f'temporal breakdown {got_t[:2]} != HTA {want_t[:2]}')
        if not any(e.get('cat') == 'mtia_ccp_events' for e in evs) and \
                want_t != sorted(temporal_breakdown(evs, False).values()):
            problems.append('temporal breakdown: the documented difference changed a trace without MTIA events')
        # Collectives by message: each row from the kernels' args, and the bandwidth.
        want_c = collective_sizes(evs)
        got_c = {(r['collective'], r['dtype'], r['group_size'],
                  -1 if r.get('message_bytes') is None else r['message_bytes']): r
                 for r in j['collective_sizes']}
        if set(want_c) != set(got_c):
            problems.append(f'collective sizes {sorted(got_c)[:2]} != trace {sorted(want_c)[:2]}')
        for key, (calls, t) in want_c.items():
            r = got_c.get(key)
            if not r or r['calls'] != calls or micros(r['time_us']) != t:
                problems.append(f'collective {key}: ours {r}, trace {(calls, t)}')
            elif key[3] >= 0 and abs(Decimal(r['algbw_gb_per_s']) - Decimal(key[3] * calls) / t) > Decimal('1e-4'):
                problems.append(f'collective {key}: algbw {r["algbw_gb_per_s"]}')
        # Findings: those each trace must and must not raise, largest saving first.
        fired = [r['id'] for r in j['recommendations']]
        for f in MUST_FIRE.get(name, set()) - set(fired):
            problems.append(f'finding {f} did not fire ({fired})')
        for f in MUST_NOT.get(name, set()) & set(fired):
            problems.append(f'finding {f} fired')
        savings = [Decimal(r['saving_us']) for r in j['recommendations'] if r['id'] != 'with_stack']
        if savings != sorted(savings, reverse=True):
            problems.append(f'findings not by saving: {savings}')
        hta_only, _, _ = launch_stats(evs, False)
        note = f'{len(j["idle_time"])} streams ({same} as HTA exactly), {kl["count"]} launches' + (
            f' ({len(hta_only)} of HTA\'s names)' if len(hta_only) != kl['count'] else '')
        note += f', {len(mem)} kinds of copies, {len(want_c)} collective sizes, {len(j["kernel_types"])} kernel type rows, {len(want_t)} temporal breakdowns'
        self.report(f'{name}: idle time, launches and copies as HTA defines them; {note}', problems)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--binary', required=True)
    ap.add_argument('--testdata', required=True)
    ap.add_argument('--no-shared', action='store_true', help='testdata/ only (the sanitizer builds: time)')
    ap.add_argument('--exclude', help='leave out traces whose name matches this regular expression')
    a = ap.parse_args()
    c = Checks(a.binary)
    traces = []
    real = os.path.join(a.testdata, 'real')
    for d in (real, os.path.join(real, 'torch211')):
        traces += sorted(os.path.join(d, f) for f in os.listdir(d)
                         if ('.json' in f and 'key_averages' not in f and
                             (f.startswith('hta__') or d.endswith('torch211'))))
    shared = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(a.testdata))), 'shared', 'traces')
    if os.path.isdir(shared) and not a.no_shared:  # the larger traces of the shared collection, where it is
        have = {os.path.basename(t) for t in traces}
        for d in (shared, os.path.join(shared, 'torch211')):
            if os.path.isdir(d):
                traces += sorted(os.path.join(d, f) for f in os.listdir(d) if f not in have and (
                    f.startswith('hta__') or (d.endswith('torch211') and f.endswith('.pt.trace.json.gz'))))
    if a.exclude:
        traces = [t for t in traces if not re.search(a.exclude, os.path.basename(t))]
    for t in traces:
        try:
            c.check(t)
        except Exception as e:  # a crash of a check is a failure too
            c.report(os.path.basename(t), [f'{type(e).__name__}: {e}'])
    return c.summary()


if __name__ == '__main__':
    sys.exit(main())
