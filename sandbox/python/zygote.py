"""The warm fork server ("zygote") for Python cells (research note §2, §5).

Started by Node with stdio ['ignore', 'pipe', 'pipe', 'pipe']: fd 3 is a socketpair carrying
NDJSON both ways. Pre-imports numpy and matplotlib (Agg) once, freezes the heap, then forks one
child per cell and multiplexes all live cells with a selector: source text for cell X is written
to X's pipe; X's merged output and its progress come back as messages tagged with X's id.
Never start threads here: fork() copies only the calling thread.
"""
import os
import sys

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'NUMEXPR_NUM_THREADS'):
    os.environ.setdefault(_var, '1')  # before any import that may start a BLAS thread pool
os.environ.setdefault('MPLBACKEND', 'Agg')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import atexit  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import selectors  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402

import cell_executor  # noqa: E402,F401  (pre-loaded so that cells start warm)
import cell_forker  # noqa: E402
import cell_io  # noqa: E402
import cell_workdir  # noqa: E402
import oom_kills  # noqa: E402
import process_tree  # noqa: E402
import seccomp_filter  # noqa: E402
import zygote_warmup  # noqa: E402

CTL = 3
READ = selectors.EVENT_READ


class Cell:
    def __init__(self, cell_id, pid, pidfd, io, cwd, in_namespace):
        self.id = cell_id
        self.pid = pid  # under per-cell namespaces: the namespace's init, the cell's parent
        self.pidfd = pidfd
        self.io = io
        self.cwd = cwd
        self.in_namespace = in_namespace
        self.killed = None
        self.oom_kills_at_start = None  # oom_kills.count() before the fork


class Zygote:
    def __init__(self, config, seccomp):
        self.config = config
        self.pid = os.getpid()
        self.sel = selectors.DefaultSelector()
        self.cells = {}
        self.by_pid = {}
        self.inbuf = b''
        self.forker = cell_forker.CellForker(config, seccomp)
        self.needs_poll = False
        self.last_sweep = 0.0
        os.set_blocking(CTL, True)

    def send(self, message):
        data = (json.dumps(message) + '\n').encode()
        view = memoryview(data)
        while view:
            view = view[os.write(CTL, view):]

    # ---- cells -------------------------------------------------------------------------------

    def open_cell(self, message):
        cell_id = message['id']
        limits = dict(self.config['limits'], **(message.get('limits') or {}))
        oom_kills_at_start = oom_kills.count()
        try:
            pid, pidfd, fds, cwd = self.forker.fork({'mode': message.get('mode', 'incremental'),
                                                     'filename': message['filename'], 'limits': limits})
        except OSError as err:
            self.send({'t': 'exit', 'id': cell_id, 'result': None, 'killed': None,
                       'status': {'code': None, 'signal': None}, 'cpuSeconds': 0,
                       'error': 'could not start the cell: %s' % err})
            return
        holder = {}
        io = cell_io.CellIO(cell_id, *fds, int(limits['outputBytes']), self.sel, self.send,
                            lambda: self.kill_cell(holder['cell'], 'output'),
                            lambda: self.kill_cell(holder['cell'], 'control'))
        cell = Cell(cell_id, pid, pidfd, io, cwd, self.forker.cell_ns)
        cell.oom_kills_at_start = oom_kills_at_start
        holder['cell'] = cell
        io.register(lambda kind: (kind, cell))
        self.cells[cell_id] = cell
        self.by_pid[pid] = cell
        if pidfd is not None:
            self.sel.register(pidfd, READ, ('pid', cell))
        else:
            self.needs_poll = True
        self.send({'t': 'started', 'id': cell_id, 'pid': pid})

    def kill_cell(self, cell, reason):
        if cell.killed is None:
            cell.killed = reason
        if cell.pid not in self.by_pid:
            return
        try:
            os.killpg(cell.pid, signal.SIGKILL)
        except OSError:
            pass
        live = set(self.by_pid)
        process_tree.kill_all(lambda: [cell.pid] + self._strays(live))

    def _strays(self, live):
        """Our children that are not cells: orphans of finished cells (we are their subreaper)."""
        return [pid for pid in process_tree.children(self.pid) if pid not in live]

    def sweep(self):
        live = set(self.by_pid)
        if not self._strays(live):
            return
        process_tree.kill_all(lambda: self._strays(live))
        for pid in self._strays(live):
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass

    def on_exit(self, cell):
        try:
            pid, status, usage = os.wait4(cell.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status, usage = cell.pid, 0, None
        if pid == 0:
            return
        if cell.pidfd is not None:
            self.sel.unregister(cell.pidfd)
            os.close(cell.pidfd)
            cell.pidfd = None
        del self.by_pid[cell.pid]
        # Whatever the cell left behind (background processes) dies with it; then both pipes
        # reach their end.
        self.sweep()
        self._drain(cell)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        reported = cell.io.exit_status
        if cell.in_namespace and code == 0 and reported is not None:
            # The init ended normally and said how the cell (its child) ended.
            code, sig = reported['code'], reported['signal']
        cpu = (usage.ru_utime + usage.ru_stime) if usage is not None else 0
        self.send({'t': 'exit', 'id': cell.id, 'result': cell.io.result, 'killed': cell.killed,
                   'status': {'code': code, 'signal': sig}, 'cpuSeconds': round(cpu, 3),
                   'maxRssKb': usage.ru_maxrss if usage is not None else 0,
                   'oomKills': oom_kills.since(cell.oom_kills_at_start)})
        self.cells.pop(cell.id, None)
        cell_workdir.remove_workdir(cell.cwd)

    def _drain(self, cell):
        deadline = time.monotonic() + 1.0
        while True:
            cell.io.drain()
            if not cell.io.open_fds() or time.monotonic() > deadline:
                break
            time.sleep(0.005)  # a writer is still exiting
        cell.io.close()

    # ---- Node --------------------------------------------------------------------------------

    def on_node(self):
        data = os.read(CTL, 65536)
        if not data:
            self.shutdown()
        self.inbuf += data
        *lines, self.inbuf = self.inbuf.split(b'\n')
        for line in lines:
            if line.strip():
                self.handle(json.loads(line))

    def handle(self, message):
        kind = message.get('t')
        if kind == 'shutdown':
            self.shutdown()
        if kind == 'open':
            self.open_cell(message)
            return
        cell = self.cells.get(message.get('id'))
        if cell is None:
            return
        if kind == 'line':
            cell.io.push_text(message['text'])
        elif kind == 'end':
            cell.io.end()
        elif kind == 'kill':
            self.kill_cell(cell, message.get('reason') or 'abort')

    def on_cell(self, kind, cell):
        try:
            if kind == 'out':
                cell.io.on_output()
            elif kind == 'ctl':
                cell.io.on_ctl()
            elif kind == 'lines':
                cell.io.flush_lines()
            elif kind == 'pid':
                self.on_exit(cell)
        except Exception:
            # What a cell sends (its code can write to both its pipes) must cost that cell alone:
            # raised here, it ended the zygote and every other cell in flight. (The exit's own
            # bookkeeping reads nothing the cell wrote but the pipes, which drain() bounds.)
            if kind == 'pid':
                raise
            self.kill_cell(cell, 'control')

    def shutdown(self):
        live = set(self.by_pid)
        process_tree.kill_all(lambda: list(live) + self._strays(live))
        for cell in list(self.cells.values()):
            cell_workdir.remove_workdir(cell.cwd)
        os._exit(0)

    def loop(self):
        while True:
            timeout = 0.05 if self.needs_poll else 1.0
            for key, _mask in self.sel.select(timeout):
                kind, cell = key.data
                if kind == 'node':
                    self.on_node()
                elif self.cells.get(cell.id) is not cell:
                    continue
                else:
                    self.on_cell(kind, cell)
            if self.needs_poll:
                for cell in list(self.cells.values()):
                    if cell.pid in self.by_pid:
                        self.on_exit(cell)
            now = time.monotonic()
            if now - self.last_sweep > 2.0:
                self.last_sweep = now
                self.sweep()


def main():
    started = time.monotonic()
    config = json.loads(sys.argv[1])
    loaded, failed = zygote_warmup.preimport(config.get('preImports', []), config.get('prewarm', True))
    try:
        seccomp = seccomp_filter.build_filter()
        seccomp_error = None
    except Exception as err:
        seccomp, seccomp_error = None, repr(err)
    atexit._clear()  # cells run their own atexit handlers; never the zygote's
    # Under bwrap the zygote is the sandbox's PID 1, which gets only the signals it handles: no
    # KeyboardInterrupt handler, so no cell can stop it with SIGINT (cells put it back).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    process_tree.set_child_subreaper()
    # Not dumpable: cells share the zygote's uid (under bwrap), and a dumpable zygote would let any
    # cell read or write its memory (/proc/PID/mem) or take its socket to Node (pidfd_getfd).
    # Forked cells inherit it; cell_child sets it again after its own set-up.
    process_tree.set_undumpable()
    zygote = Zygote(config, seccomp)
    gc.collect()
    gc.freeze()  # keeps the child's GC from dirtying every inherited page
    probe = zygote.forker.probe()
    zygote.sel.register(CTL, READ, ('node', None))
    zygote.send({'t': 'ready', 'pid': zygote.pid, 'python': sys.version.split()[0],
                 'executable': sys.executable, 'preImports': {'loaded': loaded, 'failed': failed},
                 'seccompAvailable': seccomp is not None, 'seccompError': seccomp_error,
                 'uidDrop': zygote.forker.drop_uid, 'uidNote': zygote.forker.uid_note, 'euid': os.geteuid(),
                 'probe': probe, 'cellNamespaces': zygote.forker.cell_ns,
                 'cellNamespacesNote': zygote.forker.cell_ns_note,
                 'netns': os.readlink('/proc/self/ns/net'),
                 'startupMs': round((time.monotonic() - started) * 1000)})
    zygote.loop()


if __name__ == '__main__':
    main()
