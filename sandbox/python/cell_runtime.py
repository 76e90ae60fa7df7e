"""The process-level surroundings of a cell: its stdio, recursion budget and interpreter exit.

Shared by both execution modes, so that only the statement-by-statement part differs.
"""
import builtins
import io
import os
import re
import sys
import threading


# Code the sandbox runs on the cell's behalf where a script runs C (its stdout's writer, the
# recursion-limit wrapper): a script's traceback has no frame for it, and nor does the cell's.
_HIDDEN = set()
_GROUP = getattr(builtins, 'BaseExceptionGroup', ())  # 3.11+


def hidden(function):
    _HIDDEN.add(function.__code__)
    return function


def without_sandbox_frames(err):
    """Unlinks the hidden code's entries from the tracebacks of `err` and the exceptions chained to
    it. A hidden function that catches `err` re-raises it with a bare `raise`, which adds no entry of
    its own (a `raise err` would); a signal handler that runs as it starts, before its `try`, leaves
    its entry to the printers of uncaught exceptions (cell_uncaught, cell_hooks), which call this."""
    todo, seen = [err], set()
    while todo:
        err = todo.pop()
        if err is None or id(err) in seen:
            continue
        seen.add(id(err))
        try:
            err.__traceback__ = _unlinked(err.__traceback__)
        except Exception:
            continue  # an object that is no exception (a thread hook's args may hold anything)
        todo += [err.__cause__, err.__context__]
        if isinstance(err, _GROUP):
            todo += err.exceptions


def _unlinked(tb):
    while tb is not None and tb.tb_frame.f_code in _HIDDEN:
        tb = tb.tb_next
    entry = tb
    while entry is not None:
        after = entry.tb_next
        while after is not None and after.tb_frame.f_code in _HIDDEN:
            after = after.tb_next
        entry.tb_next = after
        entry = after
    return tb


class _FdWriter(io.RawIOBase):
    """Unbuffered writes to an fd that never lose a partial write (stdout and stderr share one pipe).

    `written` counts every byte both streams wrote, so progress messages can say how much output
    preceded them."""

    written = 0

    def __init__(self, fd):
        self._fd = fd

    def writable(self):
        return True

    def fileno(self):
        return self._fd

    @hidden
    def write(self, data):
        try:
            try:
                view = memoryview(data)
            except TypeError:
                # FileIO's words, as a script's `sys.stdout.buffer.write('text')` says them.
                raise TypeError("a bytes-like object is required, not '%s'" % type(data).__name__) from None
            view = view.cast('B')
            total = len(view)
            while view:
                count = os.write(self._fd, view)
                _FdWriter.written += count
                view = view[count:]
            return total
        except BaseException as err:
            # A signal handler runs (and raises) here as often as not, since printing is most of a
            # printing loop's time; a script's stdout is C, with no frame to show.
            without_sandbox_frames(err)
            raise


def install_stdio():
    """fd 1 and fd 2 are the same pipe, and both text streams write through at once, so the pipe
    holds stdout and stderr in exactly the order the program wrote them.

    stdout's error handler is the one the interpreter chose for its own in this environment (the
    cell's: surrogateescape under the sandbox's C.UTF-8), as a script's is: with 'strict', a
    surrogate-escaped byte (a line read with errors='surrogateescape', an undecodable file name)
    raised UnicodeEncodeError where a script prints the byte."""
    errors = getattr(sys.__stdout__, 'errors', None) or 'strict'
    sys.stdout = io.TextIOWrapper(_FdWriter(1), encoding='utf-8', errors=errors, write_through=True)
    sys.stderr = io.TextIOWrapper(_FdWriter(2), encoding='utf-8', errors='backslashreplace',
                                  write_through=True)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, 'r', closefd=False), encoding='utf-8')
    sys.__stdout__, sys.__stderr__, sys.__stdin__ = sys.stdout, sys.stderr, sys.stdin


_TOO_LOW = re.compile(r'(limit to )(\d+)( at the recursion depth )(\d+)')


class RecursionBudget:
    """Gives cell code the recursion depth a script run has (F6).

    A script's module frame is the first frame; a cell's sits below the zygote's and the
    executor's frames. The real limit is raised by that depth, and sys.getrecursionlimit /
    sys.setrecursionlimit are wrapped so the cell still sees and sets the usual numbers."""

    offset = None

    @classmethod
    def install(cls, frame):
        if cls.offset is not None:
            return
        depth = 0
        while frame is not None:
            depth += 1
            frame = frame.f_back
        if sys.version_info < (3, 12):
            depth += 1  # before 3.12 the C-level entry of exec() also counts (measured)
        cls.offset = depth
        real_get, real_set = sys.getrecursionlimit, sys.setrecursionlimit

        def getrecursionlimit():
            return real_get() - depth

        def setrecursionlimit(limit):
            try:
                if not isinstance(limit, int) or limit < 1:
                    return real_set(limit)  # let CPython raise its own error
                try:
                    return real_set(limit + depth)
                except RecursionError as err:
                    # Its numbers as the cell counts them: less the sandbox's frames and this one.
                    raise RecursionError(_TOO_LOW.sub(
                        lambda m: '%s%d%s%d' % (m[1], int(m[2]) - depth, m[3], int(m[4]) - depth - 1),
                        str(err))) from None
            except BaseException as err:
                without_sandbox_frames(err)
                raise

        hidden(setrecursionlimit)
        getrecursionlimit.__doc__ = real_get.__doc__
        setrecursionlimit.__doc__ = real_set.__doc__
        real_set(real_get() + depth)
        sys.getrecursionlimit, sys.setrecursionlimit = getrecursionlimit, setrecursionlimit
        _start_threads_at(depth)


def _start_threads_at(depth):
    """The limit is the interpreter's, for every thread, but only the main thread has the sandbox's
    frames under its code: a thread recursed `depth` frames deeper than a script's (a background
    RecursionError 13 frames later). Each thread now starts on `depth` frames of its own, below
    threading's bootstrap, where no traceback of its exceptions reaches."""
    bootstrap = threading.Thread._bootstrap

    def _bootstrap(self):
        return _climb(depth - 1, bootstrap, self)

    threading.Thread._bootstrap = hidden(_bootstrap)
    _start_low_level_threads_at(depth)


def _start_low_level_threads_at(depth):
    """The same for `_thread.start_new_thread`, whose function runs on no bootstrap of threading's:
    it runs on `depth` frames of the sandbox's (before, 13 frames deeper than a script's thread).
    threading bound the real function when imported, so its threads do not climb twice."""
    import _thread
    real = _thread.start_new_thread

    def start_new_thread(function, args, kwargs=None):
        try:
            if callable(function):
                function = _Deeper(function, depth)
            # The real one checks the arguments, with its own words.
            return real(function, args) if kwargs is None else real(function, args, kwargs)
        except BaseException as err:
            without_sandbox_frames(err)  # a script's start_new_thread is C, with no frame
            raise

    hidden(start_new_thread).__doc__ = real.__doc__
    for name in ('start_new_thread', 'start_new'):  # start_new: the old alias (before 3.13)
        if getattr(_thread, name, None) is real:
            setattr(_thread, name, start_new_thread)


class _Deeper:
    """The thread's function, called from `depth` frames of its own. An exception it does not
    catch is reported here, as the interpreter reports it ("Exception ignored in thread started
    by: <function f …>"), with the function as the report's `object` and none of these frames in
    its traceback: left to the interpreter, a replaced `sys.unraisablehook` got this wrapper and
    a dozen frames of the sandbox's (`python-background-tracebacks.test.ts`)."""

    def __init__(self, function, depth):
        self._function, self._depth = function, depth

    def __repr__(self):
        return repr(self._function)

    @hidden
    def __call__(self, *args, **kwargs):
        try:
            return _climb(self._depth - _CALL_FRAMES, self._function, *args, **kwargs)
        except SystemExit:
            raise  # ends the thread without a word, as there
        except BaseException as err:  # noqa: B902
            failed = err
        # Outside the except block: the hook runs with no exception being handled, as a script's.
        import cell_hooks
        if sys.version_info >= (3, 13):  # PyErr_FormatUnraisable: the repr in the message, no object
            cell_hooks.write_unraisable(failed, f'Exception ignored in thread started by {self._function!r}', None)
        else:
            cell_hooks.write_unraisable(failed, 'Exception ignored in thread started by', self._function)


# What calling an instance counts towards the limit: before 3.12, its C slot counts one more
# than a function's call (measured), with the __call__ frame; from 3.12, the frame alone.
_CALL_FRAMES = 2 if sys.version_info < (3, 12) else 1


@hidden
def _climb(frames, function, *args, **kwargs):
    """Calls `function(*args, **kwargs)` from `frames` frames of its own."""
    if frames > 1:
        return _climb(frames - 1, function, *args, **kwargs)
    return function(*args, **kwargs)


def interpreter_shutdown(release_main):
    """What the interpreter does after the main module: join non-daemon threads, run atexit, then
    finalize the main module, which the cell's os._exit would otherwise skip.

    `release_main()` drops the caller's references to the main module and returns a weakref to it."""
    threading = sys.modules.get('threading')
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:
            pass
    try:
        import atexit
        atexit._run_exitfuncs()
    except BaseException:
        pass
    _flush_stdio()
    try:
        _finalize_main(release_main())
    except BaseException:
        pass
    _flush_stdio()


def _finalize_main(main_ref):
    """CPython's `finalize_modules` for `__main__`: out of sys.modules, a collection (the module's
    globals go, in their order, while the functions still see them), then `_PyModule_ClearDict`
    if something still holds the module. Objects only the module held are released here, so
    their `__del__` (or a suspended generator's `finally`) runs and prints as at the end of a
    script; before, a cell never ran them."""
    import gc
    # CPython empties all of sys.modules; only the main module's entries (aliases included) matter here.
    for name, module in list(sys.modules.items()):
        if module is not None and module is main_ref():
            sys.modules[name] = None
    module = None
    gc.collect()
    module = main_ref()
    threading = sys.modules.get('threading')
    # A script's daemon threads no longer run at this point; a cell's still do, and would see
    # the cleared globals (None) and print errors no script shows.
    if module is None or (threading is not None and threading.active_count() > 1):
        return
    d = module.__dict__
    del module
    for key, value in list(d.items()):
        if value is not None and isinstance(key, str) and key[:1] == '_' and key[1:2] != '_':
            d[key] = None
    for key, value in list(d.items()):
        if value is not None and isinstance(key, str) and key != '__builtins__':
            d[key] = None
    del d
    gc.collect()


def _flush_stdio():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def output_bytes_written():
    return _FdWriter.written
