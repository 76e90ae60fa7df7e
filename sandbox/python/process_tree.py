"""Finding and killing every process a cell started, from inside the zygote.

Each cell and the zygote are child subreapers, so an orphaned grandchild is re-parented to its
cell while the cell lives, and to the zygote after that; following parent links therefore finds
them all, including those that called setsid() to leave the cell's process group. Children are
read from /proc/PID/task/TID/children when the kernel has it (cheap: only the tree is visited),
else from a full /proc scan (costly outside a PID namespace, where /proc lists the whole host).
"""
import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36

try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:
    _libc = None

_HAVE_CHILDREN_FILE = os.path.exists('/proc/self/task/%d/children' % os.getpid())


def prctl(option, value):
    if _libc is None:
        return False
    return _libc.prctl(option, value, 0, 0, 0) == 0


def set_child_subreaper():
    return prctl(_PR_SET_CHILD_SUBREAPER, 1)


def set_parent_death_signal(sig=signal.SIGKILL):
    return prctl(_PR_SET_PDEATHSIG, int(sig))


def die_with_parent(expected_parent, read_ppid=os.getppid):
    """Arms SIGKILL for the parent's death; False if the parent that forked us is already gone.

    The signal is sent only by a parent that dies after it was armed: one that died between our
    fork and this call never sends it, and the caller must exit at once instead of running on,
    orphaned. `read_ppid`: a namespace's init reads its parent from the outer /proc (getppid()
    says 0 there)."""
    set_parent_death_signal(signal.SIGKILL)
    return read_ppid() == expected_parent


def set_dumpable(value):
    return prctl(_PR_SET_DUMPABLE, 1 if value else 0)


def set_undumpable():
    """PR_SET_DUMPABLE 0: processes of the same uid (other cells) can no longer open this one's
    /proc/PID/mem, fd/, environ…, ptrace it or take its descriptors with pidfd_getfd; its /proc
    entries become root's. Its own /proc/self stays usable. Inherited by fork, reset by execve
    and by any uid/gid change."""
    return prctl(_PR_SET_DUMPABLE, 0)


def _stat(pid):
    """(ppid, state) of a process, or None if it is gone."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b')') + 2:].split()
    if len(fields) < 2:
        return None
    return int(fields[1]), fields[0].decode('ascii', 'replace')


def _scan_children():
    table = {}
    for name in os.listdir('/proc'):
        if name.isdigit():
            entry = _stat(int(name))
            if entry is not None:
                table.setdefault(entry[0], []).append(int(name))
    return table


def children(pid, _table=None):
    """Direct children of `pid` (zombies included)."""
    if _HAVE_CHILDREN_FILE:
        found = []
        try:
            tasks = os.listdir('/proc/%d/task' % pid)
        except OSError:
            return found
        for tid in tasks:
            try:
                with open('/proc/%d/task/%s/children' % (pid, tid)) as f:
                    found.extend(int(c) for c in f.read().split())
            except OSError:
                pass
        return found
    table = _table if _table is not None else _scan_children()
    return list(table.get(pid, ()))


def tree(roots):
    """Live (non-zombie) processes in the trees below `roots`, roots included when alive."""
    table = None if _HAVE_CHILDREN_FILE else _scan_children()
    found, todo, seen = [], list(roots), set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        entry = _stat(pid)
        if entry is not None and entry[1] != 'Z':
            found.append(pid)
        todo.extend(children(pid, table))
    return found


def kill_all(roots_fn, rounds=200):
    """SIGKILLs everything `roots_fn()` yields plus its descendants until nothing is left.

    Repeats because a fork bomb keeps forking between a walk and the kills; each round kills
    every process that could still fork, so it converges within a few rounds."""
    for _ in range(rounds):
        victims = tree(roots_fn())
        if not victims:
            return True
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return False
