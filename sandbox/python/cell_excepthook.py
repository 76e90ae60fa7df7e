"""Printing a `sys.excepthook` that raised, as the interpreter does (`_PyErr_PrintEx`).

Before, the executor printed only the original traceback, so a broken hook's own error went
unseen; a script prints "Error in sys.excepthook:", the hook's traceback, then "Original exception
was:" and the original one.
"""
import sys
import traceback


def print_hook_failure(hook_error, err, tb):
    """`hook_error` was raised by the hook called for `err` (with its cell-only traceback `tb`)."""
    stderr = sys.stderr
    if stderr is None:
        return  # as a script: nowhere to print
    try:
        stderr.write('Error in sys.excepthook:\n')
        # The first frame is the executor's call of the hook, which a script's C caller lacks.
        hook_tb = hook_error.__traceback__.tb_next if hook_error.__traceback__ else None
        if hook_error.__context__ is err:
            hook_error.__context__ = None  # implied by the executor's except block, not the hook
        traceback.print_exception(type(hook_error), hook_error, hook_tb, file=stderr)
        stderr.write('\nOriginal exception was:\n')
        traceback.print_exception(type(err), err, tb, file=stderr)
    except Exception:
        pass  # a stderr that cannot be written to: the interpreter gives up too
