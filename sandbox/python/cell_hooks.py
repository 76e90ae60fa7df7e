"""Tracebacks that the interpreter prints from C, with the cell's source lines.

An exception a thread does not catch (before 3.13) and every "Exception ignored" report (a
`__del__`, an atexit callback, a generator's close) are printed by C code that reads each frame's
source line from the file on disk, not from linecache. A cell's code is in linecache only, so
those tracebacks lost the line that a script run shows under each of the cell's frames. These
hooks print the same text with the traceback module, which reads linecache (as the executor
already does for the cell's own uncaught exception).

Those C printers read line 1 of a file with its byte order mark, as the main thread's printer
does (CellSource.as_file): the hooks print in the same context, so a cell whose text began with
one shows it there too (before, only the main thread's traceback did).
"""
import contextlib
import sys
import threading
import traceback
import types

import cell_excepthook
import cell_runtime
import exception_printer

_as_file = contextlib.nullcontext


def _hook_args_type():
    """`sys.UnraisableHookArgs`, which sys does not expose: caught from one report, in the zygote
    (no thread of a cell's is running yet to see the swapped hook)."""
    seen = []

    class _Probe:
        def __del__(self):
            raise RuntimeError

    hook, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        _Probe()
    finally:
        sys.unraisablehook = hook
    return type(seen[0])


_HookArgs = _hook_args_type()
_MISSING = object()
_c_excepthook = sys.__excepthook__


def install(as_file):
    """Only over the interpreter's own hooks: code in the cell that set its own keeps it.
    `as_file()`: a context in which linecache holds the lines as a file run's C printer reads them."""
    global _as_file
    _as_file = as_file
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = sys.__excepthook__ = _excepthook
    if threading.excepthook is threading.__excepthook__:
        threading.excepthook = threading.__excepthook__ = _thread_excepthook
    if sys.unraisablehook is sys.__unraisablehook__:
        sys.unraisablehook = sys.__unraisablehook__ = _unraisable_hook


def _excepthook(exc_type, value, tb, /):
    """`sys.excepthook`'s default (`PyErr_Display`), for code that calls it itself: a hook of its
    own that hands over to `sys.__excepthook__`, or `sys.excepthook(*sys.exc_info())`. The C one
    reads source lines from disk and showed none of the cell's. (The cell's own uncaught exception,
    with this hook in place, is printed by cell_uncaught, as before.)"""
    if not isinstance(value, BaseException):
        return _c_excepthook(exc_type, value, tb)  # its own TypeError about the value
    stderr = getattr(sys, 'stderr', _MISSING)
    if stderr is None:
        return None
    if isinstance(tb, types.TracebackType) and value.__traceback__ is None:
        value.__traceback__ = tb  # as PyErr_Display: the exception's own traceback, else this one
    cell_runtime.without_sandbox_frames(value)
    with _as_file():
        cell_excepthook.print_uncaught(value, value.__traceback__)
    return None


def _thread_excepthook(args, /):
    """`_thread._excepthook`: the header, then what sys.excepthook would print."""
    if args.exc_type == SystemExit:
        return
    stderr = sys.stderr
    if stderr is None:
        stderr = getattr(args.thread, '_stderr', None)
        if stderr is None:
            return
    name = args.thread.name if args.thread is not None else threading.get_ident()
    print(f'Exception in thread {name}:', file=stderr, flush=True)
    tb = args.exc_traceback
    if args.exc_value is not None:
        cell_runtime.without_sandbox_frames(args.exc_value)
        tb = args.exc_value.__traceback__
    with _as_file():
        if isinstance(args.exc_value, BaseException):
            exception_printer.print_exception(args.exc_value, tb, stderr)
        else:
            stderr.write(''.join(traceback.format_exception(args.exc_type, args.exc_value, tb)))
    stderr.flush()


def _unraisable_hook(unraisable, /):
    """CPython's default unraisable hook (`write_unraisable_exc_file`), line for line."""
    stderr = sys.stderr
    if stderr is None:
        return
    try:
        with _as_file():
            text = ''.join(_unraisable_text(unraisable))
        stderr.write(text)
        if unraisable.exc_type is not None and unraisable.exc_value is not None:
            # After ': ', as the C printer calls it: what the exception's __str__ prints itself
            # comes there, as in a script (before, ahead of the whole report).
            stderr.write(exception_printer.str_or_marker(unraisable.exc_value))
        stderr.write('\n' if unraisable.exc_type is not None else '')
        stderr.flush()
    except Exception:
        pass


@cell_runtime.hidden
def write_unraisable(err, err_msg, obj):
    """`_PyErr_WriteUnraisableMsg`, for an exception the sandbox's own wrapper caught where a
    script's C code would report it with `obj` (the code's own function) rather than the wrapper.
    Call it outside any `except` block: the hook runs with no exception being handled, as there."""
    cell_runtime.without_sandbox_frames(err)
    args = _HookArgs((type(err), err, err.__traceback__, err_msg, obj))
    hook = getattr(sys, 'unraisablehook', _MISSING)
    if hook is not _MISSING:
        try:
            sys.audit('sys.unraisablehook', hook, args)
        except BaseException as failed:  # noqa: B902 — reported, not raised, as there
            args, hook = _failure(failed, 'Exception ignored in audit hook', None), None
        if hook is not None:
            try:
                hook(args)
                return
            except BaseException as failed:  # noqa: B902
                args = _failure(failed, 'Exception ignored in sys.unraisablehook', hook)
    _unraisable_hook(args)  # the interpreter's default, as cell_hooks prints it


def _failure(err, err_msg, obj):
    cell_runtime.without_sandbox_frames(err)
    return _HookArgs((type(err), err, err.__traceback__, err_msg, obj))


def _unraisable_text(u):
    out = []
    if u.object is not None:
        out.append('Exception ignored in: ' if u.err_msg is None else f'{u.err_msg}: ')
        try:
            out.append(repr(u.object))
        except Exception:
            out.append('<object repr() failed>')
        out.append('\n')
    elif u.err_msg is not None:
        out.append(f'{u.err_msg}:\n')
    tb = u.exc_traceback
    if u.exc_value is not None and tb is u.exc_value.__traceback__:
        cell_runtime.without_sandbox_frames(u.exc_value)
        tb = u.exc_value.__traceback__
    if tb is not None:
        out.extend(_traceback_lines(tb))
    if u.exc_type is None:
        return out
    module = getattr(u.exc_type, '__module__', None)
    if not isinstance(module, str):
        out.append('<unknown>')
    elif module not in ('builtins', '__main__'):
        out.append(module + '.')
    out.append(getattr(u.exc_type, '__qualname__', '<unknown>'))
    if u.exc_value is not None:
        out.append(': ')  # the text follows, written by the caller
    return out


def _traceback_lines(tb):
    """`PyTraceBack_Print`: the last `sys.tracebacklimit` frames, none at all below 1."""
    limit = getattr(sys, 'tracebacklimit', None)
    if isinstance(limit, int) and limit <= 0:
        return []
    # A negative limit keeps the last frames, as the C printer does (the traceback module's own
    # reading of sys.tracebacklimit keeps the first ones).
    frames = traceback.extract_tb(tb, limit=-limit if isinstance(limit, int) else sys.maxsize)
    if sys.version_info >= (3, 13):
        # From 3.13 only the traceback module draws carets; the C printer shows the line alone.
        for frame in frames:
            frame.colno = frame.end_colno = None
    return ['Traceback (most recent call last):\n', *frames.format()]
