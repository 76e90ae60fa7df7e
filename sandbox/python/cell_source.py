"""The cell's text as it arrives: chunks of UTF-8 from its source pipe, as physical lines.

'\r\n' and a lone '\r' become '\n' first: compile() of a str does exactly that, so line numbers
and string contents stay the same as in a whole-file compile. A leading byte order mark is
dropped, as a file run's tokenizer drops it (compile() of a str refuses it).
"""
import codecs
import contextlib
import linecache
import threading

BOM = '\ufeff'


class CellSource:
    def __init__(self, filename, read_chunk, before_read):
        self._read_chunk = read_chunk    # blocking read of source text; b'' at end of stream
        self._before_read = before_read  # called before every read (the executor says idle)
        self.src = []                    # physical lines exactly as received (normalized newlines)
        self.cache_lines = _CacheLines()  # the same, each ending in '\n', for linecache
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
        """linecache's lines, for the calling thread, as the interpreter's own traceback printer
        reads them from a file: line 1 with its byte order mark, which shifts the columns of its
        carets. Python's linecache (and so traceback.print_exc() in the code, in any other thread)
        drops the mark, as the cell's lines do."""
        if not self.bom:
            yield
            return
        with self.cache_lines.with_bom():
            yield


class _CacheLines(list):
    """The cell's lines in linecache, where line 1 has the byte order mark for the thread inside
    `with_bom()` only. Before, the mark was written into the list itself for that time, and a
    thread that read line 1 meanwhile (`traceback.print_exc()` in a thread while the main thread
    printed its traceback) showed it, as no file run's linecache does. linecache hands out this
    list and indexes it (`lines[lineno - 1]`), and so do the traceback module and inspect."""

    def __init__(self):
        super().__init__()
        self._reader = threading.local()

    @contextlib.contextmanager
    def with_bom(self):
        depth = getattr(self._reader, 'depth', 0)
        self._reader.depth = depth + 1
        try:
            yield
        finally:
            self._reader.depth = depth

    def __getitem__(self, index):
        line = list.__getitem__(self, index)
        if (type(index) is int and getattr(self._reader, 'depth', 0)
                and (index == 0 or index == -len(self))):
            return BOM + line
        return line
