"""A small line lexer: the O(n) pre-filter in front of `tokenize` (research note §1.3).

It tracks, across physical lines, the bracket depth, open string literals (prefix, quote, triple,
raw, backslash-newline) and, on Python >= 3.12, nested f-string replacement fields and format specs
(PEP 701). It only answers "is the text fed so far at a logical-line boundary?". The splitter
asks `tokenize` to confirm every "yes", so a lexer bug can only delay execution, never split a
statement in the wrong place. Every doubtful case therefore errs towards "still inside".
"""
import re
import sys

_PEP701 = sys.version_info >= (3, 12)
_STRING_PREFIXES = frozenset({'r', 'u', 'b', 'br', 'rb', 'f', 'fr', 'rf'})
_IDENT_START = re.compile(r'[^\W\d]', re.UNICODE)
_IDENT_REST = re.compile(r'\w*', re.UNICODE)


class _Str:
    __slots__ = ('quote', 'triple', 'raw', 'fmt', 'stop')

    def __init__(self, quote, triple, raw, fmt):
        self.quote = quote
        self.triple = triple
        self.raw = raw
        self.fmt = fmt
        # Characters that can change the state inside this literal; everything else is skipped.
        self.stop = re.compile('[\\\\' + quote + ('{}' if fmt else '') + ']')


class _Field:
    """An f-string replacement field `{...}`: code with its own bracket depth."""
    __slots__ = ('depth', 'string')

    def __init__(self, string):
        self.depth = 0
        self.string = string


class _Spec:
    """The format spec after `:` in a replacement field; `{` nests a field, `}` ends both."""
    __slots__ = ('field',)

    def __init__(self, field):
        self.field = field


class LineLexer:
    def __init__(self):
        self._stack = []
        self._depth = 0
        self._continued = False

    def at_boundary(self):
        """True when the text fed so far ends at a logical-line boundary (as far as this lexer knows)."""
        return not self._stack and self._depth == 0 and not self._continued

    def feed(self, line):
        """Feeds one physical line (with or without its trailing newline)."""
        end = len(line)
        if end and line[end - 1] == '\n':
            end -= 1
        self._continued = False
        eol_escaped = False
        i = 0
        while i < end:
            top = self._stack[-1] if self._stack else None
            if top is None or type(top) is _Field:
                i = self._code(line, i, end, top)
            elif type(top) is _Str:
                i, eol_escaped = self._string(line, i, end, top)
            else:
                i = self._spec(line, i, end, top)
        if self._stack:
            top = self._stack[-1]
            if type(top) is _Str and not top.triple and not eol_escaped:
                # An unterminated one-line string is a syntax error: close it so the error
                # surfaces at the next statement instead of waiting for the end of the cell.
                self._stack.pop()

    def _code(self, s, i, end, field):
        c = s[i]
        if c == '#':
            return end
        if c in '([{':
            if field is None:
                self._depth += 1
            else:
                field.depth += 1
            return i + 1
        if c in ')]}':
            if field is None:
                if self._depth:
                    self._depth -= 1
            elif field.depth:
                field.depth -= 1
            elif c == '}':
                self._stack.pop()
            return i + 1
        if c == ':' and field is not None and field.depth == 0:
            self._stack.append(_Spec(field))
            return i + 1
        if c == '\\':
            if i + 1 >= end:
                self._continued = True
                return end
            return i + 1
        if c == '"' or c == "'":
            return self._open_string(s, i, '')
        if _IDENT_START.match(c):
            j = _IDENT_REST.match(s, i + 1).end()
            if j > end:
                j = end
            if j < end and s[j] in '"\'' and j - i <= 2 and s[i:j].lower() in _STRING_PREFIXES:
                return self._open_string(s, j, s[i:j].lower())
            return j
        return i + 1

    def _open_string(self, s, i, prefix):
        q = s[i]
        triple = s.startswith(q * 3, i)
        self._stack.append(_Str(q, triple, 'r' in prefix, _PEP701 and 'f' in prefix))
        return i + (3 if triple else 1)

    def _string(self, s, i, end, st):
        m = st.stop.search(s, i, end)
        if m is None:
            return end, False
        i = m.start()
        c = s[i]
        if c == '\\':
            if i + 1 >= end:
                return end, True
            if st.fmt and s[i + 1] in '{}':
                # PEP 701: a backslash does not escape a brace (the `fr'\{{'` bug in the note).
                return i + 1, False
            return i + 2, False
        if c == st.quote:
            if not st.triple:
                self._stack.pop()
                return i + 1, False
            if s.startswith(c * 3, i):
                self._stack.pop()
                return i + 3, False
            return i + 1, False
        # st.fmt and c is a brace
        if i + 1 < end and s[i + 1] == c:
            return i + 2, False
        if c == '{':
            self._stack.append(_Field(st))
        return i + 1, False

    def _spec(self, s, i, end, spec):
        c = s[i]
        if c == '{':
            self._stack.append(_Field(spec.field.string))
            return i + 1
        if c == '}':
            self._stack.pop()
            self._stack.pop()
            return i + 1
        if c == '\\':
            return i + 2
        string = spec.field.string
        if c == string.quote and (not string.triple or s.startswith(c * 3, i)):
            # The literal ends inside a spec: invalid code; unwind to before the string.
            while self._stack and self._stack[-1] is not string:
                self._stack.pop()
            if self._stack:
                self._stack.pop()
            return i + (3 if string.triple else 1)
        return i + 1
