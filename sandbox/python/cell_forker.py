"""How the zygote forks one cell, and the start-up probe that settles how.

A cell gets a fresh working directory, three pipes (source lines in, merged output out, control
messages out) and is started with `os.fork()`, or with `clone(2)` into namespaces of its own
(cell_namespace.py). Whether cells get those namespaces and the uid drop is decided once, at
start-up, by a probe cell forked exactly as every later cell will be (cell_probe.py).
"""
import os
import tempfile

import cell_child
import cell_namespace
import cell_probe
import cell_workdir


class CellForker:
    def __init__(self, config, seccomp):
        self.limits = config['limits']
        self.seccomp = seccomp
        self.pid = os.getpid()
        self.drop_uid = os.geteuid() == 0 and cell_child.uid_mapped(cell_child.NOBODY)
        self.uid_note = None
        # Per-cell user/PID/IPC/mount namespaces (cell_namespace.py), when asked for (bwrap) and
        # the probe cell shows they work; otherwise cells share the zygote's, and the note says why.
        self.cell_ns = bool(config.get('cellNamespaces'))
        self.cell_ns_note = None
        if self.cell_ns and not cell_namespace.supported():
            self.cell_ns, self.cell_ns_note = False, 'clone(2) is not wired for this architecture'
        self.probe_error = None
        self.cell_root = tempfile.gettempdir()

    def probe(self):
        """Forks one throw-away cell with the full setup and reports what held inside it."""
        report = self._probe_once()
        if self.cell_ns and not cell_probe.isolated(report, self.cell_root):
            self.cell_ns_note = self.probe_error or 'the probe cell did not get its own namespaces'
            self.cell_ns = False
            report = self._probe_once()
        if self.drop_uid and (report is None or not report.get('stdlibReadable', True)):
            # `unshare -r` (uid 0 in a user namespace that maps no other uid), or an interpreter
            # that only root can read (a pyenv under /root): cells keep the zygote's uid, and the
            # protections report says so.
            self.uid_note = ('the interpreter is not readable by uid %d' % cell_child.NOBODY
                             if report is not None else 'cells cannot switch to uid %d' % cell_child.NOBODY)
            self.drop_uid = False
            report = self._probe_once()
        return report

    def _probe_once(self):
        report, self.probe_error = cell_probe.run(self.fork, self.limits)
        return report

    def fork(self, child_config):
        """Starts one cell; returns (pid, pidfd or None, (lines_w, out_r, ctl_r), its workdir)."""
        cwd = cell_workdir.make_workdir(self.cell_root, cell_child.NOBODY if self.drop_uid else None)
        lines_r, lines_w = os.pipe()
        out_r, out_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        config = dict(child_config, cwd=cwd, dropUid=self.drop_uid, cellNamespaces=self.cell_ns,
                      outerUid=os.geteuid(), outerGid=os.getegid())
        try:
            pid = cell_namespace.clone() if self.cell_ns else os.fork()
        except OSError:
            for fd in (lines_r, lines_w, out_r, out_w, ctl_r, ctl_w):
                os.close(fd)
            cell_workdir.remove_workdir(cwd)
            raise
        if pid == 0:
            try:
                if self.cell_ns:
                    cell_child.run_init((lines_r, out_w, ctl_w), config, self.pid, self.seccomp)
                else:
                    cell_child.run((lines_r, out_w, ctl_w), config, self.pid, self.seccomp)
            finally:
                os._exit(72)  # not reached
        for fd in (lines_r, out_w, ctl_w):
            os.close(fd)
        for fd in (lines_w, out_r, ctl_r):
            os.set_blocking(fd, False)
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
        return pid, pidfd, (lines_w, out_r, ctl_r), cwd
