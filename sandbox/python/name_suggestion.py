"""The ". Did you mean: 'x'?" that Python 3.11's C printer adds to a NameError or AttributeError.

3.11's traceback module offers none (from 3.12 it does, and exception_printer leaves those types
to it there), so a cell on 3.11 printed `NameError: name 'valuse' is not defined` where a script
prints `... Did you mean: 'values'?`: the hint a model most often needs after a typo.

The rule is the interpreter's (its documented behaviour, measured against it): only the exact
types, not subclasses; the names of the frame that raised (its local variables, then its
globals, then its builtins) or `dir(obj)`, each list only if it has fewer than 750 names; the
closest name by an edit distance over UTF-8 bytes where an insert or a delete costs 2, a
substitution 2 and a change of an ASCII letter's case 1, at most a third of both names' length,
and none where the two differ, past a common start and end, in more than 40 bytes.
"""
import sys

_MOVE = 2
_CASE = 1
_MAX_NAMES = 750
_MAX_LENGTH = 40

ENABLED = sys.version_info[:2] == (3, 11)


def hint(exc):
    """The text to add after the exception's message, or ''."""
    try:
        name = _closest_name(exc)
    except Exception:
        return ''  # as the interpreter, which clears the error and offers nothing
    return f". Did you mean: '{name}'?" if name is not None else ''


def _closest_name(exc):
    if type(exc) is AttributeError:
        name = exc.name
        if type(name) is not str:
            return None
        return _closest(dir(exc.obj), name)
    if type(exc) is NameError:
        name, tb = exc.name, exc.__traceback__
        if type(name) is not str or tb is None:
            return None
        while tb.tb_next is not None:
            tb = tb.tb_next
        frame = tb.tb_frame
        for names in (frame.f_code.co_varnames, frame.f_globals, frame.f_builtins):
            found = _closest(list(names), name)
            if found is not None:
                return found
    return None


def _closest(names, wrong):
    if len(names) >= _MAX_NAMES:
        return None
    wrong_bytes = wrong.encode('utf-8')
    best, best_distance = None, sys.maxsize
    for name in names:
        if type(name) is not str:
            return None  # the interpreter gives up on a list it cannot read as text
        name_bytes = name.encode('utf-8')
        if name == wrong:
            continue
        limit = min((len(wrong_bytes) + len(name_bytes) + 3) * _MOVE // 6, best_distance - 1)
        distance = _distance(wrong_bytes, name_bytes, limit)
        if distance <= limit and (best is None or distance < best_distance):
            best, best_distance = name, distance
    return best


def _distance(a, b, limit):
    """The edit distance of `a` and `b`, or anything above `limit` once it must exceed it."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    end = 0
    while end < len(a) and end < len(b) and a[-1 - end] == b[-1 - end]:
        end += 1
    if end:
        a, b = a[:-end], b[:-end]
    if not a or not b:
        return (len(a) + len(b)) * _MOVE
    if len(a) > _MAX_LENGTH or len(b) > _MAX_LENGTH:
        return limit + 1
    if len(b) < len(a):
        a, b = b, a  # a row per byte of the longer: the early stop below depends on it
    previous = [i * _MOVE for i in range(len(a) + 1)]
    for j, code in enumerate(b, 1):
        row = [j * _MOVE]
        for i, other in enumerate(a, 1):
            row.append(min(previous[i - 1] + _substitution(code, other),
                           previous[i] + _MOVE, row[i - 1] + _MOVE))
        # The interpreter stops once a row's every cell but the first is past the limit (the
        # first too can lead to a cheaper end; stopping there is its rule, so it is this one's).
        if min(row[1:]) > limit:
            return limit + 1
        previous = row
    return previous[-1]


def _substitution(x, y):
    if x == y:
        return 0
    if x | 0x20 == y | 0x20 and 0x61 <= (x | 0x20) <= 0x7A:
        return _CASE  # the same ASCII letter, the other case
    return _MOVE
