"""Compiles one unit (a group of top-level statements) so it behaves as part of the whole module.

Research note §1.2: each unit's tree is moved down to its real line numbers, carries over the
`__future__` flags of the units before it, gets a `pass` in front of a later leading string (so
the module's `__doc__` stays), and, when it holds a module-level `global`/`nonlocal` or a
`from __future__` import, is checked by a compile of the whole text so far.
"""
import ast

import __future__

import warning_capture

_FUTURE_MASK = 0
for _name in __future__.all_feature_names:
    _FUTURE_MASK |= getattr(__future__, _name).compiler_flag


class UnitCompiler:
    def __init__(self, filename, source_lines):
        self.filename = filename
        self._src = source_lines  # the cell's physical lines so far, appended to by the executor
        self._future_flags = 0
        self._compiled_units = 0

    def compile(self, unit):
        """Returns (code, its (first, last) line span), or (None, None) for a unit with no statement."""
        tree = unit.tree
        if tree is None:
            tree = parse_at(unit.text, unit.start, self.filename, self._future_flags)
        if not tree.body:
            return None, None
        unit_span = span(tree)
        if self._compiled_units:
            first = tree.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                # compile() would take a leading string as the docstring and overwrite __doc__.
                tree.body.insert(0, ast.Pass(lineno=first.lineno, col_offset=first.col_offset,
                                             end_lineno=first.lineno, end_col_offset=first.col_offset))
            if _needs_prefix_compile(tree):
                # Cross-statement checks (global after use, late __future__) only exist in a
                # whole-module compile; doing it only here keeps the cell linear (note §1.2).
                end = unit.start - 1 + unit.text.count('\n') + (0 if unit.text.endswith('\n') else 1)
                with warning_capture.captured():
                    # Only its error counts: the earlier units printed their warnings when they ran.
                    compile(''.join(self._src[:end]), self.filename, 'exec', dont_inherit=True)
        code = compile(tree, self.filename, 'exec', self._future_flags, dont_inherit=True)
        self._future_flags |= code.co_flags & _FUTURE_MASK
        self._compiled_units += 1
        return code, unit_span


def parse_at(text, start, filename, flags=0):
    """The tree of `text` as lines `start`... of the module.

    Parsed alone and moved down with `ast.increment_lineno`: a parse of the text padded with one
    newline per earlier line (as before) made a cell of n one-line statements quadratic (10,000:
    2.4 s, where the whole text runs in 0.3 s). What the parser itself says, its warnings and
    errors, carries its own line number, so a text it says something about is parsed again padded,
    for the cell's warning filters and the error to see the real line; that is rare."""
    with warning_capture.captured() as caught:
        try:
            tree = compile(text, filename, 'exec', ast.PyCF_ONLY_AST | flags, dont_inherit=True)
        except Exception:  # SyntaxError, ValueError (NUL byte), RecursionError, MemoryError
            tree = None
    if tree is None or caught:
        return compile('\n' * (start - 1) + text, filename, 'exec', ast.PyCF_ONLY_AST | flags,
                       dont_inherit=True)
    return ast.increment_lineno(tree, start - 1)


def span(tree):
    """First and last line of a module's statements, a leading decorator included."""
    first = tree.body[0]
    start = first.lineno
    for deco in getattr(first, 'decorator_list', ()):
        start = min(start, deco.lineno)
    return start, tree.body[-1].end_lineno


def _needs_prefix_compile(tree):
    """True when the unit holds a module-level `global`/`nonlocal` or a `from __future__` import."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == '__future__':
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.excepthandler)) or type(child).__name__ == 'match_case':
                todo.append(child)
    return False
