"""Runs one cell inside the forked child: incremental (statement by statement) or whole.

The observation rule: the merged stdout+stderr of the incremental run must equal what a
whole-file run of the same text prints. Both modes share every piece below (stdio, module,
linecache, traceback printing), and in both the final verdict comes from compiling the whole
text: if it does not compile, the observation is only that error, as `python script.py` would
print it, and whatever the incremental run already did is discarded.
"""
import ast
import builtins
import os
import sys
import traceback
import weakref

import cell_compile_error
import cell_main_file
import cell_uncaught
import unit_compiler
from cell_runtime import RecursionBudget, interpreter_shutdown
from cell_source import CellSource
from statement_splitter import StatementSplitter

# Bound once, in the zygote: code in the cell may replace os.getpid.
_getpid = os.getpid


class CellExecutor:
    def __init__(self, filename, send, read_chunk):
        self.filename = filename
        self._send = send            # control message to the zygote (dict)
        self._source = CellSource(filename, read_chunk, self._before_read)
        self._file_end = 0           # lines in __main__'s file: up to the statement running now
        self._module = cell_main_file.main_module(
            filename, lambda: ''.join(self._source.cache_lines[:self._file_end]))
        self._module.__builtins__ = builtins
        sys.modules['__main__'] = self._module
        sys.argv = [filename]
        self._compiler = unit_compiler.UnitCompiler(filename, self._source.src)
        self.units_run = 0
        self._stopped = False
        self._unit_compile_error = None
        self._ending = cell_uncaught.Ending()
        self._busy = False
        self._pid = _getpid()

    # ---- input -------------------------------------------------------------------------------

    def source_as_file(self):
        """CellSource.as_file, for the printers in cell_hooks."""
        return self._source.as_file()

    def _before_read(self):
        # Before every read, not only on a change: the zygote honours an idle only once the
        # cell has read everything it was sent, so it needs one after each read (cell_io.py).
        self._busy = False
        self._send({'t': 'idle'})

    def _set_busy(self, busy):
        if busy != self._busy:
            self._busy = busy
            self._send({'t': 'busy' if busy else 'idle'})

    # ---- modes -------------------------------------------------------------------------------

    def run_incremental(self):
        splitter = StatementSplitter(self.filename)
        lines = self._source.lines()
        for line in lines:
            if line is None:
                last = next(lines)
                if last:
                    self._source.add(last)
                self._run_units(splitter.finish(last))
                break
            self._source.add(line)
            self._run_units(splitter.feed(line))
        return self._finish()

    def run_whole(self):
        lines = self._source.lines()
        for line in lines:
            if line is None:
                last = next(lines)
                if last:
                    self._source.add(last)
                break
            self._source.add(line)
        self._set_busy(True)
        source = self._source.text()
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
                code = self._ending.exit_code
            interpreter_shutdown(self._release_main)
            if self._ending.exit_signal == 'SIGINT':
                cell_uncaught.die_of_sigint()
        finally:
            os._exit(code)

    def _handle_exception(self, err):
        self._ending = cell_uncaught.uncaught(err, self.filename, self._source.as_file)

    # ---- the end -----------------------------------------------------------------------------

    def _release_main(self):
        main = weakref.ref(self._module)
        self._module = None
        return main

    def _whole_compile_error(self, source):
        err = cell_compile_error.whole_compile_error(source, self.filename)
        if err is None:
            return None
        err = cell_compile_error.as_file_run(err, self._source.cache_lines, self._source.bom)
        error = {'type': type(err).__name__, 'message': cell_uncaught.safe_str(getattr(err, 'msg', None) or err),
                 'compileError': True}
        if getattr(err, 'lineno', None):
            error['lineno'] = err.lineno
        return {'ok': False, 'unitsRun': self.units_run, 'error': error,
                'compileErrorText': cell_compile_error.format_compile_error(err), 'exitCode': 1}

    def _finish(self, compiled=False):
        self._set_busy(True)
        if not compiled:
            compile_error = self._whole_compile_error(self._source.text())
            if compile_error is not None:
                return compile_error
            err = self._unit_compile_error
            if err is not None:
                # Should not happen (the whole text compiles but one unit did not); show the
                # unit's error rather than hide it.
                print(''.join(traceback.format_exception(type(err), err, None)), end='', file=sys.stderr)
                self._ending = cell_uncaught.Ending(1, None, {
                    'type': type(err).__name__, 'message': cell_uncaught.safe_str(err), 'compileError': True})
        interpreter_shutdown(self._release_main)
        ending = self._ending
        result = {'ok': ending.error is None, 'unitsRun': self.units_run, 'exitCode': ending.exit_code}
        if ending.exit_signal is not None:
            result['exitSignal'] = ending.exit_signal
        if ending.error is not None:
            result['error'] = ending.error
        return result
