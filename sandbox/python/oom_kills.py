"""How many processes the kernel's OOM killer has killed, host-wide (`oom_kill` in /proc/vmstat,
Linux 4.13+; a cgroup's OOM kills count there too).

A cell's memory limit is RLIMIT_AS, which makes allocations fail (MemoryError), not a SIGKILL: a
SIGKILL that no limit sent is the OOM killer or a kill by the cell's own code (or anyone's). If
the count did not move while the cell ran, it was not the OOM killer.
"""


def count():
    """The count now, or None where it cannot be read (no /proc, an older kernel)."""
    try:
        with open('/proc/vmstat', 'rb') as f:
            for line in f:
                if line.startswith(b'oom_kill '):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def since(start):
    """OOM kills since `start` (a count()), or None when either count is unknown."""
    now = count()
    return None if start is None or now is None else now - start
