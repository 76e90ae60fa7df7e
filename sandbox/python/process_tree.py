"""Finding and killing every process a cell started, from inside the zygote.

Each cell and the zygote are child subreapers, so an orphaned grandchild is re-parented to its
cell while the cell lives, and to the zygote after that; a walk over parent links in /proc then
finds them all, including those that called setsid() to leave the cell's process group.
"""
import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36

try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:
    _libc = None


def prctl(option, value):
    if _libc is None:
        return False
    return _libc.prctl(option, value, 0, 0, 0) == 0


def set_child_subreaper():
    return prctl(_PR_SET_CHILD_SUBREAPER, 1)


def set_parent_death_signal(sig=signal.SIGKILL):
    return prctl(_PR_SET_PDEATHSIG, int(sig))


def process_table():
    """{pid: (ppid, state)} for every process visible in /proc."""
    table = {}
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name, 'rb') as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b')') + 2:].split()
        if len(fields) > 1:
            table[int(name)] = (int(fields[1]), fields[0].decode('ascii', 'replace'))
    return table


def descendants(roots, table):
    """Live (non-zombie) processes below the given pids, roots included when alive."""
    children = {}
    for pid, (ppid, _state) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(roots)
    seen = set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        entry = table.get(pid)
        if entry is not None and entry[1] != 'Z':
            found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def kill_all(roots_fn, rounds=200):
    """SIGKILLs everything `roots_fn(table)` yields plus its descendants until nothing is left.

    Repeats because a fork bomb keeps forking between a walk and the kills; each round kills
    every process that could still fork, so it converges within a few rounds."""
    for _ in range(rounds):
        table = process_table()
        victims = descendants(roots_fn(table), table)
        if not victims:
            return True
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return False
