"""Printing an uncaught exception where the code broke what prints it, as the interpreter does
(`_PyErr_PrintEx`): a `sys.excepthook` that raised, a closed `sys.stderr`.

Before, the executor printed only the original traceback, so a broken hook's own error went
unseen; a script prints "Error in sys.excepthook:", the hook's traceback, then "Original exception
was:" and the original one.
"""
import os
import sys

import exception_printer


def print_uncaught(err, tb):
    """The default hook's traceback on `sys.stderr`. One the code closed (or broke) cannot take it:
    the interpreter then dumps the exception on fd 2 and says so. Before, the executor itself failed
    there and the model read only the output before it, with status 71.

    Returns the exception's text as the traceback shows it (None if it was not formatted), so the
    cell's report reuses it: its `__str__` runs once, as in a script (the report called it again)."""
    text = None
    try:
        text = exception_printer.print_exception(err, tb, sys.stderr)
    except Exception:
        # As `_PyObject_Dump` less its addresses and refcount, which differ from run to run.
        dump = 'object type name: %s\nobject repr     : %s\nlost sys.stderr\n' % (type(err).__name__, _repr(err))
        try:
            os.write(2, dump.encode('utf-8', 'backslashreplace'))
        except OSError:
            pass
    return text


def _repr(value):
    try:
        return repr(value)
    except Exception:
        return '<unprintable>'


def print_hook_failure(hook_error, err, tb):
    """`hook_error` was raised by the hook called for `err` (with its cell-only traceback `tb`).
    Returns `err`'s text as printed, or None if it was not."""
    stderr = sys.stderr
    if stderr is None:
        return None  # as a script: nowhere to print
    try:
        stderr.write('Error in sys.excepthook:\n')
        # The first frame is the executor's call of the hook, which a script's C caller lacks.
        hook_tb = hook_error.__traceback__.tb_next if hook_error.__traceback__ else None
        if hook_error.__context__ is err:
            hook_error.__context__ = None  # implied by the executor's except block, not the hook
        exception_printer.print_exception(hook_error, hook_tb, stderr)
        stderr.write('\nOriginal exception was:\n')
        return exception_printer.print_exception(err, tb, stderr)
    except Exception:
        return None  # a stderr that cannot be written to: the interpreter gives up too
