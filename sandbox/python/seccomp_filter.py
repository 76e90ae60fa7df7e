"""The per-cell seccomp filter (research note §3), built once in the zygote, loaded in each child.

Default allow; deny (EPERM) the syscalls a Python cell has no business making: non-AF_UNIX
sockets (no network even where no network namespace exists), ptrace and cross-process memory
access (process_vm_*, process_madvise, kcmp; pidfd_open/pidfd_getfd/process_mrelease, so no
taking another process's descriptors: the unfiltered zygote still uses pidfd_open), mounts and
namespaces, kernel modules and keyrings, bpf, perf, io_uring, userfaultfd.
clone3 answers ENOSYS so glibc falls back to clone(2), whose flags the filter can inspect.
"""
import errno
import socket

try:
    import seccomp  # Debian: python3-seccomp
except ImportError:  # optional
    seccomp = None

_DENIED = (
    'ptrace', 'process_vm_readv', 'process_vm_writev', 'mount', 'umount2', 'pivot_root', 'chroot',
    'unshare', 'setns', 'bpf', 'perf_event_open', 'kexec_load', 'kexec_file_load', 'init_module',
    'finit_module', 'delete_module', 'keyctl', 'add_key', 'request_key', 'userfaultfd',
    'io_uring_setup', 'io_uring_enter', 'io_uring_register', 'swapon', 'swapoff', 'reboot',
    'syslog', 'acct', 'quotactl', 'open_by_handle_at', 'name_to_handle_at', 'fsopen', 'fsmount',
    'fsconfig', 'fspick', 'move_mount', 'open_tree', 'settimeofday', 'clock_settime', 'adjtimex',
    'iopl', 'ioperm', 'lookup_dcookie', 'vhangup',
    'pidfd_open', 'pidfd_getfd', 'kcmp', 'process_madvise', 'process_mrelease',
    # Written, a memfd is RAM that neither RLIMIT_AS nor the sized tmpfs counts (only RLIMIT_FSIZE
    # per file): nothing a cell needs (multiprocessing uses /dev/shm, which is sized).
    'memfd_create', 'memfd_secret',
)
_CLONE_NS_FLAGS = (0x00020000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
                   0x02000000)  # NEWNS NEWUTS NEWIPC NEWUSER NEWPID NEWNET NEWCGROUP


def build_filter():
    """Returns a loadable filter, or None when libseccomp's Python binding is not installed."""
    if seccomp is None:
        return None
    filt = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    eperm = seccomp.ERRNO(errno.EPERM)
    filt.add_rule(eperm, 'socket', seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    filt.add_rule(eperm, 'socketpair', seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    for name in _DENIED:
        try:
            filt.add_rule(eperm, name)
        except (RuntimeError, ValueError, OSError):
            pass  # unknown to this libseccomp / architecture
    for flag in _CLONE_NS_FLAGS:
        filt.add_rule(eperm, 'clone', seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    try:
        filt.add_rule(seccomp.ERRNO(errno.ENOSYS), 'clone3')
    except (RuntimeError, ValueError, OSError):
        pass
    return filt
