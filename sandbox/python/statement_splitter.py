"""Splits a stream of physical lines into top-level statements that are safe to run now.

The rule (research note §1.2). A pending group runs when a line L arrives such that:
  1. L is not blank and not comment-only,
  2. L starts at column 0,
  3. the pending text is at a logical-line boundary (lexer pre-filter, confirmed by `tokenize`),
  4. L does not start with else / elif / except / finally,
  5. the last column-0 logical line of the group is not a decorator,
  6. the group contains code.
R2: a group whose first logical line holds only simple statements runs as soon as that line ends.
REPL completeness APIs (codeop, IPython check_complete) are deliberately not used: a blank line
does not end a block in a script (note §1.1).
"""
import ast
import io
import re
import tokenize

import warning_capture
from line_lexer import LineLexer

_CLAUSE = re.compile(r'(?:else|elif|except|finally)\b')
_COMPOUND = tuple(
    getattr(ast, name)
    for name in ('If', 'For', 'AsyncFor', 'While', 'Try', 'TryStar', 'With', 'AsyncWith',
                 'FunctionDef', 'AsyncFunctionDef', 'ClassDef', 'Match')
    if hasattr(ast, name)
)


class Unit:
    """A group of lines to compile and run as one: `text` starts at line `start` (1-based)."""
    __slots__ = ('start', 'text', 'tree')

    def __init__(self, start, text, tree=None):
        self.start = start
        self.text = text
        self.tree = tree  # already parsed (at its real lines) by the R2 check, or None


def _is_blank_or_comment(line):
    stripped = line.lstrip(' \t\f\r\n')
    return not stripped or stripped[0] == '#'


def _tokenizer_says_boundary(text):
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except tokenize.TokenError as err:
        # Only "EOF in multi-line statement/string" means "not finished yet"; anything else is an
        # error that compile() will report with the exact whole-file message.
        return 'EOF' not in str(err.args[0] if err.args else err)
    except (SyntaxError, ValueError):
        return True
    return True


class StatementSplitter:
    def __init__(self, filename='<llm-cell>', eager=True):
        self._filename = filename
        self._eager = eager
        self._lexer = LineLexer()
        self._lines_before = 0      # lines already handed out in units
        self._pending = []
        self._has_code = False
        self._decorator_last = False
        self._first_logical_open = False  # inside the group's first logical code line

    def feed(self, line):
        """Feeds one physical line ending in '\\n'. Returns the units that may run now."""
        units = []
        at_boundary = self._lexer.at_boundary()
        code_start = at_boundary and not _is_blank_or_comment(line)
        if (code_start and self._has_code and not line[0].isspace()
                and not _CLAUSE.match(line) and not self._decorator_last
                and _tokenizer_says_boundary(''.join(self._pending))):
            units.append(self._take())
        self._append(line, code_start)
        if (self._eager and self._first_logical_open and self._lexer.at_boundary()
                and line.endswith('\n')):
            self._first_logical_open = False
            unit = self._eager_unit()
            if unit is not None:
                units.append(unit)
        return units

    def finish(self, last_line=''):
        """End of the stream; `last_line` is a final line without a newline, if any."""
        units = self.feed(last_line) if last_line else []
        if self._has_code:
            units.append(self._take())
        return units

    def _append(self, line, code_start):
        if code_start:
            if not self._has_code:
                self._first_logical_open = True
            self._has_code = True
            if not line[0].isspace():
                self._decorator_last = line[0] == '@'
        self._pending.append(line)
        self._lexer.feed(line)

    def _take(self):
        unit = Unit(self._lines_before + 1, ''.join(self._pending))
        self._lines_before += len(self._pending)
        self._pending = []
        self._has_code = False
        self._decorator_last = False
        self._first_logical_open = False
        return unit

    def _eager_unit(self):
        text = ''.join(self._pending)
        # The parser warns as it reads ('\\d' in a string), and a compound statement's header
        # fails here and is parsed again as its unit: its warnings would print twice (three times
        # on 3.11, whose parser re-reads a failing text). Kept only with the tree that is used.
        with warning_capture.captured() as caught:
            try:
                # Parsed alone (a padding of one newline per earlier line made the cell
                # quadratic); only a tree without warnings is kept, and moved down below.
                tree = ast.parse(text, self._filename)
            except (SyntaxError, ValueError):
                return None  # e.g. a lone decorator; the normal rule decides later
            except (RecursionError, MemoryError):
                # An expression nested past the parser's depth: it raised out of the executor (no
                # output, status 71). The unit's compile fails the same way, and the whole
                # text's compile then prints what a file run does.
                return None
        if not tree.body or any(isinstance(node, _COMPOUND) for node in tree.body):
            return None
        unit = self._take()
        # A tree whose parse warned is parsed again by the unit's compile, which warns under the
        # cell's own filters, once.
        unit.tree = None if caught else ast.increment_lineno(tree, unit.start - 1)
        return unit
