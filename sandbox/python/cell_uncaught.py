"""An exception that ended the cell (or a process it forked at the top level): what the
interpreter prints for it, and how a script run that raised it would end."""
import os
import signal
import sys

import cell_excepthook
import cell_runtime

# Bound once, in the zygote: code in the cell may replace os.getpid, os.kill or signal.signal.
_getpid = os.getpid
_kill = os.kill
_set_signal = signal.signal


class Ending:
    """How the run ends: `exit_code` as a shell's `$?`, `exit_signal` the signal a script would die
    of ('SIGINT') or None, `error` the report's error (None for a success)."""

    def __init__(self, exit_code=0, exit_signal=None, error=None):
        self.exit_code = exit_code
        self.exit_signal = exit_signal
        self.error = error


def uncaught(err, filename, as_file):
    """Prints `err` as a script's interpreter would (SystemExit's message, or the traceback from
    the cell's first frame on) and returns the Ending. `as_file()`: a context in which linecache
    holds the lines as the interpreter's own printer reads them from a file (CellSource.as_file)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if isinstance(err, SystemExit):
        return _system_exit(err.code)
    # Python 3.11's default excepthook prints err.__traceback__, not its tb argument (F11).
    err.__traceback__ = tb
    cell_runtime.without_sandbox_frames(err)
    tb = err.__traceback__
    lineno = None
    walk = tb
    while walk is not None:
        if walk.tb_frame.f_code.co_filename == filename:
            lineno = walk.tb_lineno
        walk = walk.tb_next
    hook_error = None
    message = None
    if sys.excepthook is sys.__excepthook__:
        # The C hook of 3.11 reads source lines from disk, not linecache, so it would print no
        # source for the cell; the traceback module prints what a script shows. With
        # `sys.stderr = None` a script prints nothing (print_exception would use stdout).
        if sys.stderr is not None:
            with as_file():
                message = cell_excepthook.print_uncaught(err, tb)
    else:
        try:
            sys.excepthook(type(err), err, tb)
        except BaseException as raised:  # noqa: B902 — the hook's SystemExit ends the run
            hook_error = raised
    if hook_error is not None:
        # A `sys.excepthook` that raised, as the interpreter reports it (`_PyErr_PrintEx`): its
        # SystemExit is the run's exit; anything else is printed, then the original exception.
        # Before, only the original was printed and the hook's own error went unseen.
        if isinstance(hook_error, SystemExit):
            return uncaught(hook_error, filename, as_file)
        with as_file():
            message = cell_excepthook.print_hook_failure(hook_error, err, tb)
    ending = Ending(1)
    if type(err) is KeyboardInterrupt:
        # A script's interpreter kills itself with SIGINT after printing it (Py_RunMain's
        # exit_sigint, for this exact type only: a subclass exits with 1), so its shell sees
        # 130; the cell said 1. A hook's SystemExit (above) exits before that, as there.
        ending = Ending(128 + signal.SIGINT, 'SIGINT')
    if message is None:
        # Nothing printed it (the code's own hook, `sys.stderr = None`): a script never calls
        # its `__str__` then, and a `__str__` that prints, counts or logs must not run here.
        message = quiet_str(err)
    ending.error = {'type': type(err).__name__, 'message': message, 'compileError': False}
    if lineno is not None:
        ending.error['lineno'] = lineno
    return ending


def _system_exit(code):
    if code is None:
        return Ending(0)
    text = None
    if isinstance(code, int):
        status = exit_status(code)
    else:
        status = 1
        # Converted once, for the print and the report both: the code's own `__str__` ran
        # twice (a script's interpreter calls it once, to print it).
        try:
            text = str(code)
        except BaseException:
            text = '<unprintable>'  # as the interpreter, which then prints nothing
        else:
            try:
                print(text, file=sys.stderr)
            except Exception:
                pass
    if not status:
        return Ending(0)
    if text is None:
        text = safe_str(code)
    return Ending(status, None, {'type': 'SystemExit', 'message': text, 'compileError': False})


def exit_status(code):
    """The status a script's `sys.exit(code)` leaves for its parent (CPython's handling of SystemExit,
    then exit(3)): `sys.exit(True)` fails with 1, `sys.exit(256)` succeeds, and an int past 64 bits
    gives 255. Reported as given, True made the report unreadable (a bool where an int goes) and
    the cell passed for a success."""
    return code & 0xFF if -(1 << 63) <= code < (1 << 63) else 0xFF


def die_of_sigint():
    """What CPython's `exit_sigint` does after an uncaught KeyboardInterrupt: the default action
    for SIGINT, then the signal to itself, so the parent's wait sees death by SIGINT. Returns only
    if the signal did not kill it (the caller then exits with 130, as CPython does)."""
    try:
        _set_signal(signal.SIGINT, signal.SIG_DFL)
        _kill(_getpid(), signal.SIGINT)
    except BaseException:
        pass


_PLAIN = (str, int, float, complex, bool, bytes, type(None))
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not a built-in


def quiet_str(err):
    """`str(err)` where that runs none of the code's own: the `__str__` is a built-in type's and
    reads only plain values (its args; an OSError's file names too). Otherwise ''."""
    owner = next((k for k in type(err).__mro__ if '__str__' in k.__dict__), object)
    if owner.__flags__ & _HEAP_TYPE:
        return ''
    values = list(BaseException.args.__get__(err))
    if issubclass(type(err), OSError):
        values += [OSError.filename.__get__(err), OSError.filename2.__get__(err)]
    while values:
        value = values.pop()
        if type(value) is tuple:
            values.extend(value)
        elif type(value) not in _PLAIN:
            return ''
    return safe_str(err)


def safe_str(value):
    try:
        return str(value)
    except BaseException:
        return '<unprintable>'
