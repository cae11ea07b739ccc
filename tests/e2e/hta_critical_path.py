"""HTA's critical path analysis, ported for the tests.

Ported from facebookresearch/HolisticTraceAnalysis at commit f4d0062,
hta/analyzers/critical_path_analysis.py (CPGraph and CriticalPathAnalysis), with pandas
and networkx replaced by plain lists and dicts and times kept as integer nanoseconds from
the decimal text. HTA is not installable here; its rules, in the file's order:

- the window (critical_path_analysis): an annotation's [ts, ts + dur]; the CPU events
  that start in it with dur > 0, and the GPU events whose launching runtime call starts
  in it with dur > 0 (and every "Stream Wait Event");
- nodes (_create_event_nodes): a start and an end node for each CPU operator, runtime or
  driver call (cat cpu_op, cuda_runtime, cuda_driver) and each GPU event that has a
  correlated CPU event, in (ts, event) order;
- the CUDA runtime lock (_construct_graph_from_cuda_runtime_events): cudaHostAlloc,
  cudaLaunchKernel and cudaMemcpyAsync calls, on any thread, in node order: each end node
  closes the starts still open (its own by an operator edge, the others by dependency
  edges) and follows the previous lock end by a dependency edge;
- call stacks (_construct_graph_from_call_stacks): per CPU thread, the backward thread
  merged into the forward one when exactly one thread each runs "autograd" and "forward"
  operators; a depth-first walk links each node to the last one: a top-level operator to
  the previous by a dependency edge (weight 0: the thread's time between top-level
  operators is on no path), everything else by an operator edge weighing the time
  between; an edge into a blocking call's end (cudaDeviceSynchronize,
  cudaStreamSynchronize, cudaEventQuery, cudaEventSynchronize, cudaMemcpy,
  cudaMemcpyAsync) weighs 0; lock pairs are left to the rule above;
- kernels (_construct_graph_from_kernels): GPU events in ts order (cuda_sync events by
  their end), each a start-to-end operator edge; a launch delay edge from the runtime
  call's start to the kernel's start when the stream's queue (+1 at each launch call, -1
  at each GPU event's start, over the whole trace) was 1 at the launch and 0 at the start
  and the stream's last event ended before the launch; else a kernel-kernel delay edge
  from the stream's last end when the gap is under 1500 us; a "Stream Wait Event" makes the
  next kernel launched on its stream wait for the kernel launched before its
  cudaEventRecord (a zero-weight sync edge); "Stream Sync", "Context Sync" and "Event
  Sync" link the stream's (every stream's, the recorded kernel's) last end to the runtime
  call's end by zero-weight sync edges;
- the path (critical_path, _validate_graph): the longest path by weight (negative
  weights count 0, HTA's default without its strict check), classified (bound_by) as gpu_kernel_kernel_overhead and
  gpu_kernel_launch_overhead by edge type, and operator edges as cpu_bound (CPU events),
  gpu_communication_bound (names holding "nccl") or gpu_compute_bound.

Where two edges join the same nodes the later replaces the earlier (networkx's add_edge).
HTA's own annotation lookup slices the matching events positionally, CPU and GPU
annotations alike; the port takes the CPU annotation's window, which is what the step is.
"""
from collections import defaultdict

RUNTIME_LOCK = frozenset(['cudaHostAlloc', 'cudaLaunchKernel', 'cudaMemcpyAsync'])
BLOCKING = frozenset(['cudaDeviceSynchronize', 'cudaStreamSynchronize', 'cudaEventQuery', 'cudaEventSynchronize',
                      'cudaMemcpy', 'cudaMemcpyAsync'])
LAUNCH_NAMES = frozenset(['cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel', 'cuLaunchKernelEx',
                          'cudaMemcpyAsync', 'cudaMemsetAsync', 'hipLaunchKernel', 'hipExtModuleLaunchKernel',
                          'hipMemsetAsync', 'hipMemcpyAsync', 'hipMemcpyWithStream'])
NODE_CATS = frozenset(['cpu_op', 'cuda_runtime', 'cuda_driver'])
GPU_CATS = frozenset(['kernel', 'Kernel', 'gpu_memset', 'Memset', 'gpu_memcpy', 'Memcpy', 'cuda_sync',
                      'gpu_user_annotation'])
KERNEL_KERNEL_DELAY_THRESHOLD_NS = 1500 * 1000

OPERATOR, DEPENDENCY, LAUNCH, KERNEL_KERNEL, SYNC = 'operator', 'dependency', 'launch', 'kernel_kernel', 'sync'
BOUNDS = ('gpu_kernel_kernel_overhead', 'gpu_kernel_launch_overhead', 'data_loading', 'cpu_bound',
          'gpu_compute_bound', 'gpu_communication_bound')


class Ev:
    __slots__ = ('i', 'name', 'cat', 'pid', 'tid', 'ts', 'dur', 'end', 'stream', 'corr', 'args', 'peer')

    def __init__(self, i, e, ns):
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        self.i, self.name, self.cat = i, str(e.get('name', '')), e.get('cat')
        self.pid, self.tid = str(e.get('pid')), str(e.get('tid'))
        self.ts, self.dur = ns(e['ts']), max(ns(e['dur']), 0)
        self.end = self.ts + self.dur
        self.stream = int(a['stream']) if self.cat in GPU_CATS and isinstance(a.get('stream'), (int, float)) else -1
        c = a.get('correlation', -1)
        self.corr = int(c) if isinstance(c, (int, float)) else -1
        self.args = a
        self.peer = -1  # index_correlation: the event on the other side of the correlation


def events_of(raw, ns):
    evs = [Ev(i, e, ns) for i, e in enumerate(x for x in raw if isinstance(x, dict) and x.get('ph') == 'X'
                                                 and 'ts' in x and x.get('dur') is not None)]
    # transform_correlation_to_index: CPU and GPU events of one correlation point at each
    # other; every kernel of a graph launch at the launch, the launch at the last of them.
    cpu = {}
    for e in evs:
        if e.corr != -1 and e.cat not in GPU_CATS:
            cpu.setdefault(e.corr, e.i)
    for e in evs:
        if e.corr != -1 and e.cat in GPU_CATS and e.corr in cpu:
            e.peer = cpu[e.corr]
            evs[cpu[e.corr]].peer = e.i
    return evs


def queue_lengths(evs):
    """_get_queue_length_time_series_for_rank: event index -> the stream's queue after it."""
    gpu_of = {e.corr: e for e in evs if e.cat in GPU_CATS and e.stream != -1 and e.corr != -1}
    launches = [e for e in evs if e.name in LAUNCH_NAMES and e.cat not in GPU_CATS and e.corr in gpu_of]
    launched = {e.corr for e in launches}
    rows = [(e.ts, 0, e.i, gpu_of[e.corr].stream, 1) for e in launches]
    rows += [(e.ts, 1, e.i, e.stream, -1) for e in evs if e.cat in GPU_CATS and e.stream != -1 and e.corr in launched]
    rows.sort(key=lambda r: (r[0], r[1]))
    q, out = defaultdict(int), {}
    for _, _, i, stream, d in rows:
        q[stream] += d
        out[i] = q[stream]
    return out


class Graph:
    def __init__(self, evs, clipped):
        self.evs = evs
        self.edges = {}  # (u, v) -> (type, weight)
        nodes = [e for e in clipped if e.cat in NODE_CATS or (e.cat in GPU_CATS and e.stream != -1 and e.peer >= 0)
                 or (e.cat == 'cuda_sync' and e.peer >= 0)]
        order = sorted([(e.ts, e.i, True) for e in nodes] + [(e.end, e.i, False) for e in nodes],
                       key=lambda x: (x[0], x[1]))
        self.ts = [x[0] for x in order]
        self.ev = [x[1] for x in order]
        self.is_start = [x[2] for x in order]
        self.start, self.end = {}, {}
        for n, (_, i, s) in enumerate(order):
            (self.start if s else self.end)[i] = n
        self.in_graph = {e.i for e in nodes}

    def add(self, u, v, kind, zero=False):
        assert u != v
        w = 0 if kind in (DEPENDENCY, SYNC) or zero else self.ts[v] - self.ts[u]
        self.edges[(u, v)] = (kind, w)

    def lock(self, n):
        return self.evs[self.ev[n]].name in RUNTIME_LOCK

    def runtime_lock(self):
        open_, last = [], None
        for n in range(len(self.ts)):
            if not self.lock(n):
                continue
            if self.is_start[n]:
                open_.append(n)
            else:
                while open_:
                    p = open_.pop()
                    self.add(p, n, OPERATOR if self.ev[p] == self.ev[n] else DEPENDENCY)
                if last is not None and not self.is_start[last]:
                    self.add(last, n, DEPENDENCY)
            last = n

    def shares_lock(self, a, b):
        return self.lock(a) and self.lock(b) and (self.is_start[a] or not self.is_start[b])

    def call_stacks(self, clipped):
        def tid_of(word):
            tids = {(e.pid, e.tid) for e in self.evs if word in e.name and e.cat in ('cpu_op', 'user_annotation')}
            return next(iter(tids)) if len(tids) == 1 else None
        fwd, bwd = tid_of('forward'), tid_of('autograd')
        threads = defaultdict(list)
        for e in clipped:
            if e.stream == -1 and e.cat not in GPU_CATS and e.i in self.in_graph:
                key = (e.pid, e.tid)
                threads[fwd if fwd and bwd and fwd != bwd and key == bwd else key].append(e)
        for evs in threads.values():
            evs.sort(key=lambda e: (e.ts, -e.dur, e.i))
            last, depth, stack = None, 0, []

            def enter(e):
                nonlocal last, depth
                s = self.start[e.i]
                if last is not None and not self.shares_lock(last, s):
                    self.add(last, s, DEPENDENCY if depth == 0 else OPERATOR)
                last, depth = s, depth + 1

            def leave(e):
                nonlocal last, depth
                n = self.end[e.i]
                if last is not None and not self.shares_lock(last, n):
                    self.add(last, n, OPERATOR, zero=e.name in BLOCKING)
                last, depth = n, depth - 1

            for e in evs:
                while stack and stack[-1].end <= e.ts:
                    leave(stack.pop())
                enter(e)
                stack.append(e)
            while stack:
                leave(stack.pop())

    def kernels(self, clipped, queue):
        evs = self.evs
        launches = sorted((e for e in evs if e.name in LAUNCH_NAMES and e.cat not in GPU_CATS and e.peer >= 0
                           and evs[e.peer].stream != -1), key=lambda e: e.ts)
        # cudaEventRecord -> the launch before it on the recorded stream (_get_cuda_event_record_df).
        record_stream = {}
        for e in evs:
            w = e.args.get('wait_on_stream', -1)
            if e.cat == 'cuda_sync' and isinstance(w, (int, float)) and w > -1:
                record_stream[e.args.get('wait_on_cuda_event_record_corr_id')] = (e.pid, int(w))
        prev_launch = {}
        last_on = {}
        for e in sorted(launches + [x for x in evs if x.name == 'cudaEventRecord' and x.corr in record_stream],
                        key=lambda x: x.ts):
            if e.name == 'cudaEventRecord':
                if record_stream[e.corr] in last_on:
                    prev_launch[e.corr] = last_on[record_stream[e.corr]]
            else:
                k = evs[e.peer]
                last_on[(k.pid, k.stream)] = e.i
        # cudaStreamWaitEvent -> the next launch on its thread and stream (_get_cuda_stream_wait_event_df).
        next_launch = {}
        waits = [e for e in evs if e.name == 'cudaStreamWaitEvent' and e.peer >= 0]
        for w in waits:
            stream = evs[w.peer].stream
            for e in launches:
                if e.ts >= w.ts and (e.pid, e.tid) == (w.pid, w.tid) and evs[e.peer].stream == stream:
                    next_launch[w.i] = e.i
                    break

        rows = [e for e in clipped if (e.stream != -1 or e.name in ('Event Sync', 'Context Sync')) and e.peer >= 0
                and e.cat in GPU_CATS]
        rows.sort(key=lambda e: e.end if e.cat == 'cuda_sync' else e.ts)
        last = {}
        kernel_sync = {}
        for r in rows:
            if r.cat == 'cuda_sync':
                if r.name in ('Stream Wait Event', 'Event Sync'):
                    rec = r.args.get('wait_on_cuda_event_record_corr_id')
                    if rec is None or rec not in prev_launch:
                        continue
                    src = evs[prev_launch[rec]].peer
                    if r.name == 'Stream Wait Event':
                        dest = next_launch.get(r.peer)
                        if dest is not None:
                            kernel_sync[evs[dest].peer] = src
                    elif src in self.end and r.peer in self.end:
                        self.add(self.end[src], self.end[r.peer], SYNC)
                    continue
                targets = list(last.values()) if r.name == 'Context Sync' else [last.get(r.stream)]
                for g in targets:
                    if g is not None and r.peer in self.end:
                        self.add(g, self.end[r.peer], SYNC)
                continue
            if r.i not in self.start:
                continue
            s, t = self.start[r.i], self.end[r.i]
            self.add(s, t, OPERATOR)
            sync_end = None
            sync_index = kernel_sync.pop(r.i, None)
            if sync_index is not None:
                sync_end = self.end.get(sync_index)
                if sync_end is None:
                    sync_index = None
                else:
                    self.add(sync_end, s, SYNC)
            runtime = evs[r.peer]
            prev = last.get(r.stream)
            if (queue.get(runtime.i) == 1 and queue.get(r.i) == 0
                    and (prev is None or self.ts[prev] < runtime.ts)
                    and (sync_index is None or self.ts[sync_end] < runtime.ts)):
                if runtime.i in self.start:
                    self.add(self.start[runtime.i], s, LAUNCH)
            elif (prev is not None and self.ts[s] - self.ts[prev] < KERNEL_KERNEL_DELAY_THRESHOLD_NS
                  and (sync_index is None or self.ts[sync_end] < self.ts[prev])):
                self.add(prev, s, KERNEL_KERNEL)
            last[r.stream] = t

    def longest_path(self):
        """The longest path (networkx's dag_longest_path) as its edges (u, v, type, weight)."""
        succ = defaultdict(list)
        indeg = defaultdict(int)
        for (u, v), (kind, w) in self.edges.items():
            succ[u].append((v, kind, max(w, 0)))
            indeg[v] += 1
        nodes = {u for uv in self.edges for u in uv}
        dist = {n: 0 for n in nodes}
        via = {}
        ready = sorted(n for n in nodes if indeg[n] == 0)
        seen = 0
        while ready:
            u = ready.pop()
            seen += 1
            for v, kind, w in succ[u]:
                if dist[u] + w > dist[v] or v not in via and dist[u] + w >= dist[v]:
                    dist[v], via[v] = dist[u] + w, (u, kind, w)
                indeg[v] -= 1
                if indeg[v] == 0:
                    ready.append(v)
        assert seen == len(nodes), 'the graph has a cycle'
        if not nodes:
            return []
        n = max(nodes, key=lambda x: dist[x])
        path = []
        while n in via:
            u, kind, w = via[n]
            path.append((u, n, kind, w))
            n = u
        return path[::-1]

    def bound_by(self, u, v, kind):
        if kind == KERNEL_KERNEL:
            return 'gpu_kernel_kernel_overhead'
        if kind == LAUNCH:
            return 'gpu_kernel_launch_overhead'
        if kind != OPERATOR:
            return None
        e = self.evs[self.ev[u]] if self.is_start[u] else self.evs[self.ev[v]]
        if e.stream < 0:
            return 'cpu_bound'
        return 'gpu_communication_bound' if 'nccl' in e.name.lower() else 'gpu_compute_bound'


def clip(evs, start, end):
    """critical_path_analysis: the events of the window [start, end]."""
    out = []
    for e in evs:
        if e.cat not in GPU_CATS:
            if start <= e.ts <= end and e.dur > 0:
                out.append(e)
        elif e.name == 'Stream Wait Event':
            out.append(e)
        elif e.peer >= 0:
            r = evs[e.peer]
            if start <= r.ts <= end and r.dur > 0:
                out.append(e)
    return out


def critical_path(evs, start, end):
    """HTA's critical path over [start, end]: (length, {bound: ns}, path edges)."""
    g = Graph(evs, clip(evs, start, end))
    g.runtime_lock()
    g.call_stacks(clip(evs, start, end))
    g.kernels(clip(evs, start, end), queue_lengths(evs))
    path = g.longest_path()
    by = dict.fromkeys(BOUNDS, 0)
    for u, v, kind, w in path:
        b = g.bound_by(u, v, kind)
        if b:
            by[b] += w
    return sum(w for *_, w in path), by, [(g.evs[g.ev[u]], g.evs[g.ev[v]], kind, w) for u, v, kind, w in path]
