"""Runs one cell inside the forked child: incremental (statement by statement) or whole.

The observation rule: the merged stdout+stderr of the incremental run must equal what a
whole-file run of the same text prints. Both modes share every piece below (stdio, module,
linecache, traceback printing), and in both the final verdict comes from compiling the whole
text: if it does not compile, the observation is only that error, as `python script.py` would
print it, and whatever the incremental run already did is discarded.
"""
import ast
import builtins
import codecs
import linecache
import os
import signal
import sys
import traceback
import weakref

import cell_compile_error
import cell_excepthook
import cell_main_file
import unit_compiler
from cell_runtime import RecursionBudget, interpreter_shutdown
from statement_splitter import StatementSplitter

# Bound once, in the zygote: code in the cell may replace os.getpid, os.kill or signal.signal.
_getpid = os.getpid
_kill = os.kill
_set_signal = signal.signal


class CellExecutor:
    def __init__(self, filename, send, read_chunk):
        self.filename = filename
        self._send = send            # control message to the zygote (dict)
        self._read_chunk = read_chunk  # blocking read of source text; b'' at end of stream
        self._src = []               # physical lines exactly as received (normalized newlines)
        self._cache_lines = []       # the same, each ending in '\n', for linecache
        linecache.cache[filename] = (0, None, self._cache_lines, filename)
        self._file_end = 0           # lines in __main__'s file: up to the statement running now
        self._module = cell_main_file.main_module(filename, lambda: ''.join(self._cache_lines[:self._file_end]))
        self._module.__builtins__ = builtins
        sys.modules['__main__'] = self._module
        sys.argv = [filename]
        self._compiler = unit_compiler.UnitCompiler(filename, self._src)
        self.units_run = 0
        self._stopped = False
        self._unit_compile_error = None
        self.error = None
        self.exit_code = 0
        self.exit_signal = None      # the signal a script run would die of ('SIGINT'), or None
        self._busy = False
        self._bom = False            # the text began with a UTF-8 byte order mark (stripped)
        self._pid = _getpid()

    # ---- input -------------------------------------------------------------------------------

    def _lines(self):
        """Yields complete physical lines; then (None, last_partial_line) at the end of the stream.

        '\\r\\n' and a lone '\\r' become '\\n' first: compile() of a str does exactly that, so line
        numbers and string contents stay the same as in a whole-file compile."""
        decoder = codecs.getincrementaldecoder('utf-8')('replace')
        rest = ''
        at_start = True
        while True:
            # Before every read, not only on a change: the zygote honours an idle only once the
            # cell has read everything it was sent, so it needs one after each read (cell_io.py).
            self._busy = False
            self._send({'t': 'idle'})
            chunk = self._read_chunk()
            text = decoder.decode(chunk, final=not chunk)
            if at_start and text:
                at_start = False
                if text.startswith(cell_compile_error.BOM):
                    # A file run's tokenizer skips it; compile() of a str refuses it.
                    text = text[1:]
                    self._bom = True
            text = rest + text
            rest = ''
            if chunk and text.endswith('\r'):
                text, rest = text[:-1], '\r'
            text = text.replace('\r\n', '\n').replace('\r', '\n')
            start = 0
            while True:
                nl = text.find('\n', start)
                if nl < 0:
                    break
                yield text[start:nl + 1]
                start = nl + 1
            rest = text[start:] + rest
            if not chunk:
                yield None
                yield rest
                return

    def _add_line(self, line):
        self._src.append(line)
        self._cache_lines.append(line if line.endswith('\n') else line + '\n')

    def _set_busy(self, busy):
        if busy != self._busy:
            self._busy = busy
            self._send({'t': 'busy' if busy else 'idle'})

    # ---- modes -------------------------------------------------------------------------------

    def run_incremental(self):
        splitter = StatementSplitter(self.filename)
        lines = self._lines()
        for line in lines:
            if line is None:
                last = next(lines)
                if last:
                    self._add_line(last)
                self._run_units(splitter.finish(last))
                break
            self._add_line(line)
            self._run_units(splitter.feed(line))
        return self._finish()

    def run_whole(self):
        lines = self._lines()
        for line in lines:
            if line is None:
                last = next(lines)
                if last:
                    self._add_line(last)
                break
            self._add_line(line)
        self._set_busy(True)
        source = ''.join(self._src)
        compile_error = self._whole_compile_error(source)
        if compile_error is not None:
            return compile_error
        tree = compile(source, self.filename, 'exec', ast.PyCF_ONLY_AST, dont_inherit=True)
        if tree.body:
            code = compile(tree, self.filename, 'exec', dont_inherit=True)
            self._exec_whole(code, unit_compiler.span(tree))
        return self._finish(compiled=True)

    def _exec_whole(self, code, span):
        # Same stack depth as run_incremental -> _run_units -> _exec, so recursion limits bite
        # at the same depth in both modes (F6).
        self._exec(code, span)

    # ---- execution ---------------------------------------------------------------------------

    def _run_units(self, units):
        for unit in units:
            if self._stopped:
                return
            self._set_busy(True)
            try:
                code, span = self._compiler.compile(unit)
            except Exception as err:  # SyntaxError, ValueError (NUL byte), RecursionError…
                self._unit_compile_error = err
                self._stop()
                return
            if code is not None:
                self._exec(code, span)

    def _stop(self):
        self._stopped = True
        self._send({'t': 'stopped'})

    def _exec(self, code, span):
        self._file_end = span[1]
        if cell_main_file.mentions_file(code):
            # Read by name it is the dict's path, which no property sees: written here instead,
            # so `open(__file__)` finds the code so far.
            getattr(self._module, '__file__', None)
        RecursionBudget.install(sys._getframe())
        try:
            exec(code, self._module.__dict__)
        except BaseException as err:  # noqa: B902 — SystemExit and KeyboardInterrupt end the cell too
            if _getpid() != self._pid:
                self._end_forked_child(err)
            self._handle_exception(err)
            self._stop()
            return
        if _getpid() != self._pid:
            self._end_forked_child(None)
        self.units_run += 1
        self._send({'t': 'unit', 'a': span[0], 'b': span[1]})

    def _end_forked_child(self, err):
        """A process that a statement forked came back to the top level: it ends here, as at the end
        of a script. (A script's child would go on with the next statements, but those are the
        cell's to read: two readers of one pipe split the statements between them, and the child's
        unit reports and result passed for the cell's.) Never returns."""
        self._send = lambda message: None
        code = 0
        try:
            if err is not None:
                self._handle_exception(err)
                code = self.exit_code
            interpreter_shutdown(self._release_main)
            if self.exit_signal == 'SIGINT':
                _die_of_sigint()
        finally:
            os._exit(code)

    def _handle_exception(self, err):
        tb = err.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != self.filename:
            tb = tb.tb_next
        self.exit_signal = None
        if isinstance(err, SystemExit):
            code = err.code
            if code is None:
                self.exit_code = 0
            elif isinstance(code, int):
                self.exit_code = _exit_status(code)
            else:
                self.exit_code = 1
                try:
                    print(code, file=sys.stderr)
                except Exception:
                    pass
            if self.exit_code:
                self.error = {'type': 'SystemExit', 'message': _safe_str(code), 'compileError': False}
            return
        # Python 3.11's default excepthook prints err.__traceback__, not its tb argument (F11).
        err.__traceback__ = tb
        lineno = None
        walk = tb
        while walk is not None:
            if walk.tb_frame.f_code.co_filename == self.filename:
                lineno = walk.tb_lineno
            walk = walk.tb_next
        hook_error = None
        if sys.excepthook is sys.__excepthook__:
            # The C hook of 3.11 reads source lines from disk, not linecache, so it would print no
            # source for the cell; the traceback module prints what a script shows. With
            # `sys.stderr = None` a script prints nothing (print_exception would use stdout).
            if sys.stderr is not None:
                cell_excepthook.print_uncaught(err, tb)
        else:
            try:
                sys.excepthook(type(err), err, tb)
            except BaseException as raised:  # noqa: B902 — the hook's SystemExit ends the run
                hook_error = raised
        self.exit_code = 1
        if type(err) is KeyboardInterrupt:
            # A script's interpreter kills itself with SIGINT after printing it (Py_RunMain's
            # exit_sigint, for this exact type only: a subclass exits with 1), so its shell sees
            # 130; the cell said 1. A hook's SystemExit (below) exits before that, as there.
            self.exit_code = 128 + signal.SIGINT
            self.exit_signal = 'SIGINT'
        self.error = {'type': type(err).__name__, 'message': _safe_str(err), 'compileError': False}
        if lineno is not None:
            self.error['lineno'] = lineno
        if hook_error is not None:
            self._hook_failed(hook_error, err, tb)

    def _hook_failed(self, hook_error, err, tb):
        """A `sys.excepthook` that raised, as the interpreter reports it (`_PyErr_PrintEx`): its
        SystemExit is the run's exit; anything else is printed, then the original exception.
        Before, only the original was printed and the hook's own error went unseen."""
        if isinstance(hook_error, SystemExit):
            self.error = None
            self._handle_exception(hook_error)
            return
        cell_excepthook.print_hook_failure(hook_error, err, tb)

    # ---- the end -----------------------------------------------------------------------------

    def _release_main(self):
        main = weakref.ref(self._module)
        self._module = None
        return main

    def _whole_compile_error(self, source):
        err = cell_compile_error.whole_compile_error(source, self.filename)
        if err is None:
            return None
        err = cell_compile_error.as_file_run(err, self._cache_lines, self._bom)
        error = {'type': type(err).__name__, 'message': _safe_str(getattr(err, 'msg', None) or err),
                 'compileError': True}
        if getattr(err, 'lineno', None):
            error['lineno'] = err.lineno
        return {'ok': False, 'unitsRun': self.units_run, 'error': error,
                'compileErrorText': cell_compile_error.format_compile_error(err), 'exitCode': 1}

    def _finish(self, compiled=False):
        self._set_busy(True)
        if not compiled:
            compile_error = self._whole_compile_error(''.join(self._src))
            if compile_error is not None:
                return compile_error
            if self._unit_compile_error is not None:
                # Should not happen (the whole text compiles but one unit did not); show the
                # unit's error rather than hide it.
                print(''.join(traceback.format_exception(type(self._unit_compile_error),
                                                         self._unit_compile_error, None)),
                      end='', file=sys.stderr)
                self.error = {'type': type(self._unit_compile_error).__name__,
                              'message': _safe_str(self._unit_compile_error), 'compileError': True}
                self.exit_code = 1
        interpreter_shutdown(self._release_main)
        result = {'ok': self.error is None, 'unitsRun': self.units_run, 'exitCode': self.exit_code}
        if self.exit_signal is not None:
            result['exitSignal'] = self.exit_signal
        if self.error is not None:
            result['error'] = self.error
        return result


def _exit_status(code):
    """The status a script's `sys.exit(code)` leaves for its parent (CPython's handling of SystemExit,
    then exit(3)): `sys.exit(True)` fails with 1, `sys.exit(256)` succeeds, and an int past 64 bits
    gives 255. Reported as given, True made the report unreadable (a bool where an int goes) and
    the cell passed for a success."""
    return code & 0xFF if -(1 << 63) <= code < (1 << 63) else 0xFF


def _die_of_sigint():
    """What CPython's `exit_sigint` does after an uncaught KeyboardInterrupt: the default action
    for SIGINT, then the signal to itself, so the parent's wait sees death by SIGINT. Returns only
    if the signal did not kill it (the caller then exits with 130, as CPython does)."""
    try:
        _set_signal(signal.SIGINT, signal.SIG_DFL)
        _kill(_getpid(), signal.SIGINT)
    except BaseException:
        pass


def _safe_str(value):
    try:
        return str(value)
    except BaseException:
        return '<unprintable>'
