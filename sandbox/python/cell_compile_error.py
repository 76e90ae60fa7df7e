"""The whole text's compile check, and its error as `python script.py` prints it.

A file run's parser reads its text as bytes, and a SyntaxError's line back from the file: the
columns are bytes of UTF-8 (characters only when a byte order mark gave the file an encoding), and
the text is the line the error is on. compile() of a str counts characters, and where the file
cannot be read (`<llm-cell>`), shows the logical line from its first physical line: line 1's text
under "line 2" after a backslash continuation. So a text that does not compile is compiled again
as UTF-8 bytes, for the columns, and the line put back as the file would give it.
"""
import traceback

import warning_capture
from cell_source import BOM


def whole_compile_error(source, filename):
    """The exception compiling `source` (a byte order mark already stripped) raises, or None."""
    if '\0' in source:
        return _null_byte_error(source, filename)
    err = _compile_error(source, filename)
    if err is None or not isinstance(err, SyntaxError):
        return err
    try:
        data = source.encode('utf-8')
    except UnicodeEncodeError:
        return err  # a lone surrogate: no file holds it
    # The same error from the bytes, for its columns. Only that: the bytes would also obey a
    # coding cookie, which the statements' own compiles (of the str) did not.
    same = _compile_error(data, filename)
    if isinstance(same, SyntaxError) and (same.msg, same.lineno) == (err.msg, err.lineno):
        return same
    return err


def _null_byte_error(source, filename):
    """What Python 3.12 and later print for a file with a NUL (whichever interpreter runs the cell;
    3.11's file run reads past it in ways no str compile can show): the line it is on, up to it,
    before any other error. compile() of a str says only `source code string cannot contain null
    bytes`, with no line, and the model cannot see the character in its own text."""
    nul = source.index('\0')
    start = source.rfind('\n', 0, nul) + 1
    # No '\n' at the end of the text: as_file_run then keeps it, as it keeps the tokenizer's.
    return SyntaxError('source code cannot contain null bytes',
                       (filename, source.count('\n', 0, nul) + 1, None, source[start:nul]))


def _compile_error(source, filename):
    try:
        # Only the error matters here: the statements' own compiles (or the whole run's) have
        # printed the compiler's warnings once already, as a script run prints them once.
        with warning_capture.captured():
            compile(source, filename, 'exec', dont_inherit=True)
    except Exception as err:
        return err
    return None


def as_file_run(err, lines, bom):
    """`err` with the text and columns a file run shows. `lines`: the physical lines, each ending
    in '\\n'."""
    if not isinstance(err, SyntaxError) or not err.lineno or not 0 < err.lineno <= len(lines):
        return err
    line = lines[err.lineno - 1]
    if err.text is None:
        # Compiler-stage errors ('return' outside function…) carry no source text for a string;
        # a file run reads the line from the file (columns in bytes, as the AST's).
        err.text = line
        return err
    if '\n' not in err.text:
        # The tokenizer's own errors (an unterminated string…): its current line, in characters,
        # in a file run too.
        return err
    # The parser's: the line from the file, where line 1 still starts with the mark.
    if bom and err.lineno == 1:
        line = BOM + line
    if bom:
        # A file with a byte order mark has an encoding: its parser turns the byte columns into
        # characters of that line (`_PyPegen_byte_offset_to_character_offset`).
        err.offset = _characters(line, err.offset)
        if err.end_offset is not None and err.end_offset > 0:
            err.end_offset = _characters(line, err.end_offset)
    err.text = line
    return err


def _characters(line, byte_offset):
    if byte_offset is None or byte_offset < 0:
        return byte_offset
    data = line.encode('utf-8')
    if byte_offset > len(data):
        return len(line) + 1  # CPython decodes up to the string's terminating NUL, one more
    return len(data[:byte_offset].decode('utf-8', 'replace'))


def format_compile_error(err):
    return ''.join(traceback.format_exception(type(err), err, None))
