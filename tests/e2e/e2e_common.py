"""Shared by the end-to-end tests: reading a trace the way their models need it
(Python's json module with every fractional number an exact Decimal, gzip found by
its magic bytes), and the tally that prints one line per check and
'N passed, N failed' last."""
import gzip
import json
from decimal import Decimal


def read_events(path):
    raw = open(path, 'rb').read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    return doc.get('traceEvents', []) if isinstance(doc, dict) else doc


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
