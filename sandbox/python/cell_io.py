"""The zygote's side of one cell's pipes: source text in, output and progress out, in order.

The cell writes its merged stdout+stderr to one pipe and its progress messages to another. Each
message carries `o`, the number of output bytes the cell had written when it sent the message,
so the zygote can forward output and messages interleaved exactly as the cell produced them,
however the two pipes happen to be read. (Bytes written straight to fd 1 or 2 below Python, e.g.
by a subprocess, are not counted; around those the interleaving is only approximate. The final
observation is the concatenated output either way.)
"""
import codecs
import collections
import fcntl
import json
import os
import selectors
import struct
import termios

READ, WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE
CHUNK = 65536
# The cell's code can write to its control pipe too: what it may make the zygote hold for it is
# bounded (the executor's own lines are far shorter, and a handful wait at a time). Past either
# bound the cell is killed ('control'), since the zygote and its memory serve every cell.
MAX_CTL_LINE = 65536
MAX_PENDING = 10000


class CellIO:
    def __init__(self, cell_id, lines_w, out_r, ctl_r, cap, selector, send, on_cap, on_abuse):
        self.id = cell_id
        self.lines_w, self.out_r, self.ctl_r = lines_w, out_r, ctl_r
        for fd in (lines_w, out_r, ctl_r):
            os.set_blocking(fd, False)
        self._sel = selector
        self._send = send          # message to Node
        self._on_cap = on_cap      # called once when the output cap is reached
        self._on_abuse = on_abuse  # called once when the control pipe breaks a bound
        self.abused = False
        self._cap = cap
        self._emitted = 0          # output bytes forwarded (or dropped past the cap)
        self._read = 0             # output bytes read from the pipe
        self._buf = b''            # read, not yet forwarded
        self._pending = collections.deque()  # progress messages waiting for their output
        self._ctl_buf = b''
        self._text_in = b''
        self._decoder = codecs.getincrementaldecoder('utf-8')('replace')
        self.ended = False
        self.result = None
        self.exit_status = None    # the last one the namespace's init wrote (cell_namespace.py)
        self.capped = False
        self._idle = True          # what Node was last told: the cell waits for the model's next line

    def register(self, data_for):
        self._sel.register(self.out_r, READ, data_for('out'))
        self._sel.register(self.ctl_r, READ, data_for('ctl'))
        self._data_for = data_for

    # ---- source text towards the cell -------------------------------------------------------

    def push_text(self, text):
        if self.lines_w is None:
            return
        self._text_in += text.encode('utf-8', 'replace')
        self.flush_lines()

    def end(self):
        self.ended = True
        self.flush_lines()

    def flush_lines(self):
        """Non-blocking: a cell busy in a long statement must not stall the other cells."""
        if self.lines_w is None:
            return
        if self._text_in:
            try:
                written = os.write(self.lines_w, self._text_in)
            except BlockingIOError:
                written = 0
            except OSError:  # the cell is gone or closed its end
                self._text_in = b''
                self._close('lines_w')
                return
            self._text_in = self._text_in[written:]
            # Text the cell has not read yet is work waiting for it, whatever the cell says.
            self._set_idle(False)
        registered = self._registered(self.lines_w)
        if self._text_in and not registered:
            self._sel.register(self.lines_w, WRITE, self._data_for('lines'))
        elif not self._text_in:
            if registered:
                self._sel.unregister(self.lines_w)
            if self.ended:
                self._close('lines_w')

    # ---- output and progress from the cell --------------------------------------------------

    def on_output(self):
        self._read_output(CHUNK)
        # Every message sent before the bytes just read is already in the control pipe.
        self._read_ctl()
        self._flush()

    def on_ctl(self):
        self._read_ctl()
        self._flush()

    def drain(self):
        """After the cell exited (and its processes were killed): read both pipes to the end."""
        while self.out_r is not None and self._read_output(CHUNK):
            pass
        while self.ctl_r is not None and self._read_ctl():
            pass
        self._flush(final=True)
        tail = self._decoder.decode(b'', final=True)
        if tail and not self.capped:
            self._send({'t': 'output', 'id': self.id, 'text': tail})

    def open_fds(self):
        return [fd for fd in (self.out_r, self.ctl_r) if fd is not None]

    def close(self):
        for attr in ('lines_w', 'out_r', 'ctl_r'):
            self._close(attr)

    def _read_output(self, limit):
        if self.out_r is None:
            return False
        try:
            data = os.read(self.out_r, limit)
        except BlockingIOError:
            return False
        if not data:
            self._close('out_r')
            return False
        self._read += len(data)
        self._buf += data
        return True

    def _read_ctl(self):
        if self.ctl_r is None:
            return False
        try:
            data = os.read(self.ctl_r, CHUNK)
        except BlockingIOError:
            return False
        if not data:
            self._close('ctl_r')
            return False
        if self.abused:
            return True  # read on to the end, and dropped
        if b'\n' not in data:
            # Only the new bytes are searched: split again as a whole, a line the cell never ended
            # cost the zygote time quadratic in its length.
            self._ctl_buf += data
            if len(self._ctl_buf) > MAX_CTL_LINE:
                self._abuse()
            return True
        *lines, self._ctl_buf = (self._ctl_buf + data).split(b'\n')
        for line in lines:
            if len(line) > MAX_CTL_LINE or len(self._pending) >= MAX_PENDING:
                self._abuse()
                return True
            try:
                message = json.loads(line)
            except Exception:  # ValueError, and RecursionError for a line nested deep enough
                continue  # a cell can write garbage into its own control pipe; ignore it
            if not isinstance(message, dict):
                continue
            if message.get('t') == 'exit-status':
                # Written by the init after every process of the cell is dead, so the last one is
                # its; one the cell forged earlier is overwritten. Not forwarded.
                if all(message.get(k) is None or type(message.get(k)) is int for k in ('code', 'signal')):
                    self.exit_status = message
                continue
            if message.get('t') == 'idle':
                # The cell's code can write this too, to stop its own wall clock while it runs. Only
                # believed once the cell has read all the text it was sent: the executor says it
                # before each read, so a true one always follows the last read.
                if not self._unread():
                    self._set_idle(True)
            elif message.get('t') == 'busy':
                self._set_idle(False)
            elif message.get('t') == 'stopped':
                # State changes need no ordering against output; never hold them back.
                self._forward(message)
            else:
                self._pending.append(message)
        return True

    def _flush(self, final=False):
        while self._pending:
            message = self._pending[0]
            # The cell's word: any int, and a read the size of it raised MemoryError (OverflowError
            # past 2**63) in the zygote, ending every cell. Read a chunk at a time instead.
            position = message.get('o') if type(message.get('o')) is int and message.get('o') > 0 else 0
            while position > self._read and self._read_output(min(position - self._read, CHUNK)):
                pass  # counted bytes were written before the message: they are in the pipe
            if position > self._read and not final and self.out_r is not None:
                break
            self._pending.popleft()
            self._emit(min(max(position - self._emitted, 0), len(self._buf)))
            self._forward(message)
        self._emit(len(self._buf))

    def _abuse(self):
        self.abused = True
        self._ctl_buf = b''
        self._pending.clear()
        self._on_abuse()

    def _emit(self, count):
        if count <= 0:
            return
        data, self._buf = self._buf[:count], self._buf[count:]
        room = self._cap - self._emitted
        self._emitted += len(data)
        if room > 0:
            text = self._decoder.decode(data[:room])
            if text:
                self._send({'t': 'output', 'id': self.id, 'text': text})
        # Output that exactly fills the cap is fine; the first byte past it is the breach.
        if len(data) > room and not self.capped:
            self.capped = True
            self._on_cap()

    def _unread(self):
        """Bytes of source text sent towards the cell that it has not read (FIONREAD works on
        either end of a pipe)."""
        pending = len(self._text_in)
        if self.lines_w is not None:
            try:
                pending += struct.unpack('i', fcntl.ioctl(self.lines_w, termios.FIONREAD, b'\0\0\0\0'))[0]
            except OSError:
                pass
        return pending

    def _set_idle(self, idle):
        if idle != self._idle:
            self._idle = idle
            self._send({'t': 'idle' if idle else 'busy', 'id': self.id})

    def _forward(self, message):
        kind = message.get('t')
        if kind == 'result':
            self.result = message
        elif kind == 'unit':
            self._send({'t': 'unit', 'id': self.id, 'a': message.get('a'), 'b': message.get('b')})
        elif kind == 'stopped':
            self._send({'t': kind, 'id': self.id})

    def _registered(self, fd):
        try:
            self._sel.get_key(fd)
            return True
        except KeyError:
            return False

    def _close(self, attr):
        fd = getattr(self, attr)
        if fd is None:
            return
        if self._registered(fd):
            self._sel.unregister(fd)
        os.close(fd)
        setattr(self, attr, None)
