"""Reads a trace the way the end-to-end tests' models need it: Python's json module
with every fractional number as an exact Decimal, gzip found by its magic bytes."""
import gzip
import json
from decimal import Decimal


def read_events(path):
    raw = open(path, 'rb').read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    return doc.get('traceEvents', []) if isinstance(doc, dict) else doc
