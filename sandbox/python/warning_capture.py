"""Collecting the warnings of the sandbox's own compiles without touching the cell's record of
warnings shown, nor another thread's warnings.

`warnings.catch_warnings()` marks the filters changed on entry and exit, and the next warning
then clears every module's `__warningregistry__`: a warning that a script shows once per place
(`warnings.warn` in a function two statements call, the default action) printed again after each
statement the cell parsed. Here the filters are swapped without that mark; the registries are
not consulted for what is collected (the 'always' action), so they stay as the cell's code left
them.

The filters are the process's, not the thread's: a thread of the cell's that warned while the
sandbox compiled a statement had its warning collected with the compiler's, and never shown.
The interpreter hands a thread the GIL as a long compile returns, still inside the swap, so a
busy thread lost a switch interval's worth (thousands of warnings while a 4,000-line function
was parsed). Now such a warning waits for the compile to end and is warned again, under the
cell's own filters, registry and module, as if the swap had never been.
"""
import _thread
import contextlib
import sys
import warnings

_ALWAYS = [('always', None, Warning, None, 0)]


@contextlib.contextmanager
def captured():
    """Yields a list that collects every warning (a `warnings.WarningMessage`) this thread's code
    raises meanwhile, none shown."""
    caught = []
    owner = _thread.get_ident()
    swap = _thread.allocate_lock()
    swap.acquire()

    def collect(message):
        if _thread.get_ident() == owner:
            caught.append(message)
        else:
            _warn_after(swap, message)

    saved = warnings.filters, warnings._showwarnmsg
    warnings.filters = _ALWAYS[:]
    warnings._showwarnmsg = collect  # what the C warn_explicit calls to show one
    try:
        yield caught
    finally:
        warnings.filters, warnings._showwarnmsg = saved
        swap.release()


def _warn_after(swap, message):
    """In the other thread: once the filters are the cell's again, what its `warn` would have done.
    An 'error' filter's exception is raised from here, so from that thread's `warn` call."""
    with swap:
        pass
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename != message.filename
                                 or frame.f_lineno != message.lineno):
        frame = frame.f_back
    if frame is None:  # a warn_explicit of the code's, of a place not on its stack
        warnings.warn_explicit(message.message, message.category, message.filename,
                               message.lineno, source=message.source)
        return
    # As the C warn's setup_context: the registry and module of the frame warned about.
    scope = frame.f_globals
    registry = scope.setdefault('__warningregistry__', {})
    warnings.warn_explicit(message.message, message.category, message.filename, message.lineno,
                           scope.get('__name__', '<string>'), registry, source=message.source)
