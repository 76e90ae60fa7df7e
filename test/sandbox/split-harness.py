"""Test harness: feeds each case to StatementSplitter line by line and reports the units.

stdin: JSON list of {"source": str, "eager": bool}. stdout: JSON list (one per case) of units
{"start", "end", "at"}: lines start..end ran when line `at` arrived (0 = at the end of the stream).
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # never leave __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'sandbox', 'python'))

from statement_splitter import StatementSplitter  # noqa: E402


def split(source, eager):
    source = source.replace('\r\n', '\n').replace('\r', '\n')
    lines = source.split('\n')
    last = lines.pop()
    splitter = StatementSplitter('<case>', eager=eager)
    out = []

    def record(units, at):
        for unit in units:
            count = unit.text.count('\n') + (0 if unit.text.endswith('\n') else 1)
            out.append({'start': unit.start, 'end': unit.start + count - 1, 'at': at})

    for number, line in enumerate(lines, 1):
        record(splitter.feed(line + '\n'), number)
    record(splitter.finish(last), 0)
    return out


cases = json.load(sys.stdin)
json.dump([split(c['source'], c.get('eager', True)) for c in cases], sys.stdout)
