"""An exception's traceback written as the interpreter's own printer writes it, piece by piece.

Before 3.13 that printer is C (`print_exception` in pythonrun.c): it writes a traceback, then the
type's name, and only then calls the exception's `__str__`, then writes ': ' and the text, for
each exception of the chain in turn. The traceback module calls every `__str__` of the chain
first, as it builds its TracebackException, so what a `__str__` prints itself (a print, a log
line) came before "Traceback" in a cell, where a script shows it after the type's name
(`E` + the print + `: msg`). From 3.13 the interpreter prints with the traceback module
(`_print_exception_bltin`), and so does this.

Shapes that the C printer lays out otherwise than the simple one are left to the traceback
module, whose `__str__` calls then come first, as before: exception groups, a SyntaxError's
caret lines, notes that are no sequence and, on 3.12, the names the module offers a suggestion
for ("Did you mean"), which it adds to the text as it builds it. On 3.11, whose module offers
none, the suggestion is the C printer's (name_suggestion.py).
"""
import builtins
import collections.abc
import sys
import traceback

import name_suggestion

CAUSE = '\nThe above exception was the direct cause of the following exception:\n\n'
CONTEXT = '\nDuring handling of the above exception, another exception occurred:\n\n'
STR_FAILED = '<exception str() failed>'

_C_PRINTER = sys.version_info < (3, 13)
_BUILTIN_LIMIT = getattr(traceback, 'BUILTIN_EXCEPTION_LIMIT', None)
_LAID_OUT_OTHERWISE = (SyntaxError, *((builtins.BaseExceptionGroup,) if hasattr(builtins, 'BaseExceptionGroup') else ()),
                       *((NameError, AttributeError, ImportError) if sys.version_info >= (3, 12) else ()))


def print_exception(err, tb, file):
    """Writes `err` with its chain (`tb`: its own traceback, the cell's frames only) to `file` and
    returns its text as written (None if it was not reached), for the cell's report."""
    chain = _chain(err, tb) if _C_PRINTER else None
    if chain is None:
        # From 3.13 the interpreter's own call passes this limit: the last sys.tracebacklimit frames.
        formatted = traceback.TracebackException(type(err), err, tb, compact=True, limit=_BUILTIN_LIMIT)
        formatted.print(file=file)
        return getattr(formatted, '_str', None)
    text = None
    for link, exc, exc_tb, notes in chain:
        if link is not None:
            file.write(link)
        stack = _c_stack(exc_tb)
        if stack:
            file.write('Traceback (most recent call last):\n' + ''.join(stack.format()))
        file.write(type_name(type(exc)))
        # Here, after the name, as the C printer does.
        text = str_or_marker(exc)
        if text:
            file.write(': ' + text)
        hint = name_suggestion.hint(exc) if name_suggestion.ENABLED else ''
        file.write(hint + '\n')
        text += hint
        for note in notes or ():
            note = str_or_marker(note, '<note str() failed>')
            file.write(''.join(line + '\n' for line in note.split('\n')))
    return text


def _c_stack(tb):
    """`PyTraceBack_Print`'s frames: the last `sys.tracebacklimit` ones (the module keeps the
    first), none at all below 1, every one for a limit that is no int."""
    limit = getattr(sys, 'tracebacklimit', None)
    if isinstance(limit, int):
        return traceback.extract_tb(tb, limit=-min(limit, sys.maxsize)) if limit > 0 else []
    return traceback.extract_tb(tb, limit=sys.maxsize)


def type_name(exc_type):
    """The name a traceback shows: qualified, with its module unless builtins or __main__."""
    name = exc_type.__qualname__
    module = exc_type.__module__
    if module in ('__main__', 'builtins'):
        return name
    return ('<unknown>' if not isinstance(module, str) else module) + '.' + name


def str_or_marker(value, marker=STR_FAILED):
    try:
        return str(value)
    except BaseException:  # noqa: B902 — the C printer clears whatever __str__ raised
        return marker


def _chain(err, tb):
    """[(link, exc, tb, notes)], the oldest first, as TracebackException(compact=True) walks it
    (`link`: the words before `exc`, or None); None for a shape laid out otherwise."""
    out, seen = [], set()
    while err is not None:
        if issubclass(type(err), _LAID_OUT_OTHERWISE):
            return None
        notes = getattr(err, '__notes__', None)
        if notes is not None and not isinstance(notes, collections.abc.Sequence):
            return None
        seen.add(id(err))
        cause, context = err.__cause__, err.__context__
        link = following = None
        if cause is not None and id(cause) not in seen:
            link, following = CAUSE, cause
        elif context is not None and not err.__suppress_context__ and id(context) not in seen:
            link, following = CONTEXT, context
        out.append((link, err, tb, notes))
        err = following
        tb = following.__traceback__ if following is not None else None
    out.reverse()
    return out
