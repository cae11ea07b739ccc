"""Shared by the end-to-end tests: reading a trace the way their models need it
(Python's json module with every fractional number an exact Decimal, gzip found by
its magic bytes), the README's repair of python_function spans, and the tally that
prints one line per check and 'N passed, N failed' last."""
import gzip
import json
from decimal import Decimal


def read_events(path):
    raw = open(path, 'rb').read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    return doc.get('traceEvents', []) if isinstance(doc, dict) else doc


def as_text(v):
    """A pid or tid as torch2pprof writes it: integral numbers without decimals."""
    if isinstance(v, Decimal) and v == v.to_integral_value():
        return str(int(v))
    return str(v)


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value())


def python_ends(evs):
    """The repaired end of each python_function X event (by position), None when dropped."""
    py = {}
    for k, e in enumerate(evs):
        a = e.get('args') if isinstance(e.get('args'), dict) else {}
        if e.get('ph') == 'X' and e.get('cat') == 'python_function' and 'ts' in e and e.get('dur') is not None:
            lane = (as_text(e.get('pid')), as_text(e.get('tid')))
            py[k] = (lane, a.get('Python id'), a.get('Python parent id'), ns(e['ts']), ns(e['ts']) + ns(e['dur']))
    by_id = {(v[0], v[1]): k for k, v in py.items() if v[1] is not None}
    ends = {}
    for k in py:
        chain = [k]  # up to a repaired ancestor or a root
        while True:
            lane, _, parent, _, _ = py[chain[-1]]
            j = by_id.get((lane, parent)) if parent is not None else None
            if j is None or j in ends or j in chain:
                break
            chain.append(j)
        for i in reversed(chain):
            lane, _, parent, s, t = py[i]
            j = by_id.get((lane, parent)) if parent is not None else None
            if j is not None and j != i and j in ends:
                pe = ends[j]
                t = None if pe is None or s >= pe else min(t, pe)
            ends[i] = t
    return ends



class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def report(self, name, problems):
        if problems:
            self.failed += 1
            print(f'FAIL {name}: ' + '; '.join(str(p) for p in problems[:5]))
        else:
            self.passed += 1
            print(f'ok   {name}')

    def summary(self):
        print(f'{self.passed} passed, {self.failed} failed')
        return 0 if self.failed == 0 else 1
