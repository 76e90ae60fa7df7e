"""Collecting the warnings of the sandbox's own compiles without touching the cell's record of
warnings shown.

`warnings.catch_warnings()` marks the filters changed on entry and exit, and the next warning
then clears every module's `__warningregistry__`: a warning that a script shows once per place
(`warnings.warn` in a function two statements call, the default action) printed again after each
statement the cell parsed. Here the filters are swapped without that mark; the registries are
not consulted for what is collected (the 'always' action), so they stay as the cell's code left
them.
"""
import contextlib
import warnings

_ALWAYS = [('always', None, Warning, None, 0)]


@contextlib.contextmanager
def captured():
    """Yields a list that collects every warning (a `warnings.WarningMessage`) raised meanwhile,
    none shown. Like catch_warnings, it is the process's state: a warning another thread raises
    meanwhile is collected too."""
    caught = []
    saved = warnings.filters, warnings._showwarnmsg
    warnings.filters = _ALWAYS[:]
    warnings._showwarnmsg = caught.append  # what the C warn_explicit calls to show one
    try:
        yield caught
    finally:
        warnings.filters, warnings._showwarnmsg = saved
