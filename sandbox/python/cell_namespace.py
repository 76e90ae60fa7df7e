"""Each cell in its own user, PID, IPC, mount and network namespaces (used under bubblewrap).

Without them the cells of one zygote share uid 65534, one PID namespace and one /tmp: a cell
could signal another, list it in /proc, open files in its working directory, and reach its
abstract AF_UNIX sockets. Here:

    zygote ──clone(NEWUSER|NEWPID|NEWIPC|NEWNS|NEWNET)──► init (PID 1 of the cell's namespace)
                                                             └─fork─► the cell (PID 2): setup, executor

The init maps the zygote's uid and gid to themselves (cells still see 65534), mounts a fresh
/proc (only this cell's processes), binds the cell's own directories over /tmp and /dev/shm
(both on the zygote's sized /tmp tmpfs: no RAM beyond today's cap), makes /dev read-only and
gives the cell its own devpts; then it drops every capability and only reaps.

Why a separate init instead of running the cell as PID 1: the kernel drops every signal that
PID 1 has no handler for when it comes from inside the namespace, its own included, and ignores
SIGXCPU for it; `os.kill(os.getpid(), ...)`, RLIMIT_CPU and friends would all change behaviour.
PID 2 behaves like any process. The init, which handles no signal, cannot be killed by the cell;
SIGKILL from the zygote (an ancestor namespace) kills it, and the kernel then kills every process
of the namespace, setsid() or not.

Why clone(2) through ctypes rather than os.fork + unshare: unshare(CLONE_NEWPID) only moves the
caller's *children*, so that would cost a third process and fork per cell (the second fork, init
→ cell, is already most of the ≈3 ms this adds to a cell's start). The clone runs inside
CPython's own fork hooks (PyOS_BeforeFork / PyOS_AfterFork_*), as os.fork does; the zygote has
no threads. The cell itself comes from a real os.fork in the init.

The init reports how the cell ended as the last line of the cell's control pipe (it cannot pass
on a signal death as its own: it may not be killed from inside), after everything else in the
namespace is dead, so nothing the cell wrote can follow it.
"""
import ctypes
import os
import platform
import signal
import struct

import process_tree

_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
# NEWNET: otherwise every cell shares bwrap's network namespace, where one cell can connect to
# another's abstract AF_UNIX socket or squat its name. Its loopback stays down (cells have no
# network; seccomp denies AF_INET anyway). Measured cost ≈0.3–0.5 ms per cell (README).
FLAGS = _CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWNS | _CLONE_NEWNET

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_ST_TO_MS = ((os.ST_RDONLY, _MS_RDONLY), (os.ST_NOSUID, _MS_NOSUID), (os.ST_NODEV, _MS_NODEV),
             (os.ST_NOEXEC, _MS_NOEXEC), (os.ST_NOATIME, _MS_NOATIME),
             (os.ST_NODIRATIME, _MS_NODIRATIME), (os.ST_RELATIME, _MS_RELATIME))

_SYS_CLONE = {'x86_64': 56, 'aarch64': 220, 'riscv64': 220}.get(platform.machine())
_CAPSET = 126 if platform.machine() == 'x86_64' else 91
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

STATUS = 'exit-status'  # the init's report of how the cell ended (cell_io keeps the last one)

try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _libc.syscall.restype = ctypes.c_long
    _libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                            ctypes.c_char_p)
except (OSError, AttributeError):
    _libc = None


def supported():
    return _libc is not None and _SYS_CLONE is not None


def clone():
    """os.fork(), but the child is PID 1 of new user, PID, IPC, mount and network namespaces. Raises OSError.

    Wrapped in the interpreter's own fork hooks, exactly as os.fork() is: the register_at_fork
    handlers must run in the child *before* it moves its descriptors (matplotlib's clears a font
    cache, which closes the zygote's font file: run later, in the cell, that closed fd 4, the
    cell's source pipe)."""
    if not supported():
        raise OSError(0, 'clone(2) is not wired for %s' % platform.machine())
    api = ctypes.pythonapi  # called with the GIL held, as os.fork() calls them
    api.PyOS_BeforeFork()
    # x86_64 clone(flags, stack, parent_tid, child_tid, tls); arm64 swaps the last two: all 0.
    pid = _libc.syscall(_SYS_CLONE, ctypes.c_ulong(FLAGS | signal.SIGCHLD), ctypes.c_ulong(0),
                        ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
    err = ctypes.get_errno()
    if pid == 0:
        api.PyOS_AfterFork_Child()
        return 0
    api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, 'clone(NEWUSER|NEWPID|NEWIPC|NEWNS|NEWNET): %s' % os.strerror(err))
    return pid


def _mount(source, target, fstype, flags, data=None):
    enc = (lambda s: s.encode() if s is not None else None)
    if _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, 'mount %s: %s' % (target, os.strerror(err)))


def _remount_read_only(path):
    # The flags this mount already has must be repeated: those inherited from bwrap are locked.
    current = os.statvfs(path).f_flag
    flags = sum(ms for st, ms in _ST_TO_MS if current & st)
    _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | flags)


def _write(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enter(workdir, outer_uid, outer_gid):
    """In the cloned init: ids, then the cell's own /proc, /tmp, /dev/shm, /dev/pts; returns the
    directory the cell works in."""
    # A non-dumpable process's /proc/self files are root's: it could not open its own maps. The
    # caller has closed every descriptor of the zygote already, and no cell can see this process.
    process_tree.set_dumpable(True)
    try:
        _write('/proc/self/uid_map', '%d %d 1\n' % (outer_uid, outer_uid))
        _write('/proc/self/setgroups', 'deny')
        _write('/proc/self/gid_map', '%d %d 1\n' % (outer_gid, outer_gid))
    finally:
        process_tree.set_undumpable()
    _mount(None, '/', None, _MS_REC | _MS_PRIVATE)  # nothing we mount goes back out
    _mount('proc', '/proc', 'proc', _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    tmp, shm = os.path.join(workdir, 'tmp'), os.path.join(workdir, 'shm')
    os.mkdir(tmp, 0o700)
    os.mkdir(shm, 0o700)
    # Binds of directories on the zygote's /tmp tmpfs: the cell sees only its own files, and they
    # count against the one sized tmpfs (ENOSPC past it) and go when the workdir is removed.
    # /dev/shm first: once /tmp is covered, `workdir` no longer resolves.
    if os.path.isdir('/dev/shm'):
        _mount(shm, '/dev/shm', None, _MS_BIND)
    _mount(tmp, '/tmp', None, _MS_BIND)
    if os.path.isdir('/dev/pts'):
        try:
            _mount('devpts', '/dev/pts', 'devpts', _MS_NOSUID | _MS_NOEXEC,
                   'newinstance,ptmxmode=0666,mode=0620')
        except OSError:
            pass  # the shared devpts stays; only ptys, which cells rarely open
    # bwrap mounts /dev read-only already (boundedDev in python-launch.ts); again here so that a
    # cell's /dev never depends on how its zygote was started.
    _remount_read_only('/dev')
    os.chdir('/')  # not the zygote's /tmp, which every cell shares
    return '/tmp'


def drop_capabilities():
    """Empty effective, permitted and inheritable sets (all the init's caps were in the cell's own
    user namespace; the cell needs none, and with no_new_privs execve cannot give any back)."""
    header = struct.pack('Ii', _LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two __user_cap_data_struct of three zero u32
    if _libc.syscall(_CAPSET, ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, 'capset: %s' % os.strerror(err))


def effective_capabilities():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('CapEff:'):
                return int(line.split()[1], 16)
    return -1


def reap(cell_pid):
    """The init's loop: reaps everything; once the cell is gone, kills the rest of the namespace,
    reaps it, and returns the cell's wait status."""
    status = None
    while True:
        try:
            pid, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            return status
        if pid == cell_pid:
            status = wait_status
        if status is not None:
            try:
                os.kill(-1, signal.SIGKILL)  # from PID 1: every other process of the namespace
            except OSError:
                pass


def status_message(wait_status):
    if wait_status is None:
        return {'t': STATUS, 'code': None, 'signal': None}
    return {'t': STATUS,
            'code': os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else None,
            'signal': os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else None}
