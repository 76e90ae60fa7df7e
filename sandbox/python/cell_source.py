"""The cell's text as it arrives: chunks of UTF-8 from its source pipe, as physical lines.

'\r\n' and a lone '\r' become '\n' first: compile() of a str does exactly that, so line numbers
and string contents stay the same as in a whole-file compile. A leading byte order mark is
dropped, as a file run's tokenizer drops it (compile() of a str refuses it).
"""
import codecs
import contextlib
import linecache

BOM = '\ufeff'


class CellSource:
    def __init__(self, filename, read_chunk, before_read):
        self._read_chunk = read_chunk    # blocking read of source text; b'' at end of stream
        self._before_read = before_read  # called before every read (the executor says idle)
        self.src = []                    # physical lines exactly as received (normalized newlines)
        self.cache_lines = []            # the same, each ending in '\n', for linecache
        self.bom = False                 # the text began with a byte order mark
        linecache.cache[filename] = (0, None, self.cache_lines, filename)

    def lines(self):
        """Yields complete physical lines; then (None, last_partial_line) at the end of the stream."""
        decoder = codecs.getincrementaldecoder('utf-8')('replace')
        rest = ''
        at_start = True
        while True:
            self._before_read()
            chunk = self._read_chunk()
            text = decoder.decode(chunk, final=not chunk)
            if at_start and text:
                at_start = False
                if text.startswith(BOM):
                    text = text[1:]
                    self.bom = True
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

    def add(self, line):
        self.src.append(line)
        self.cache_lines.append(line if line.endswith('\n') else line + '\n')

    def text(self):
        return ''.join(self.src)

    @contextlib.contextmanager
    def as_file(self):
        """linecache's lines as the interpreter's own traceback printer reads them from a file: line 1
        with its byte order mark, which shifts the columns of its carets. Python's linecache (and
        so traceback.print_exc() in the code) drops the mark, as the cell's lines do."""
        if not self.bom or not self.cache_lines:
            yield
            return
        first = self.cache_lines[0]
        self.cache_lines[0] = BOM + first
        try:
            yield
        finally:
            self.cache_lines[0] = first
