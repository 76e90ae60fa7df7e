"""Applies per-process limits, then execs the plugin command (runtime `process`).

Runs inside the sandbox (after bwrap/unshare set up the namespaces, which need the syscalls the
seccomp filter denies) as: python3 -I exec_launcher.py '<json config>' -- command args...
The rlimits and the seccomp filter survive execve (no_new_privs is set by libseccomp), so the
plugin process and everything it forks keep them. Exit code 121 = the setup itself failed.
"""
import ctypes
import json
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
SETUP_FAILED = 121


def main():
    config = json.loads(sys.argv[1])
    if sys.argv[2] != '--' or len(sys.argv) < 4:
        fail('usage: exec_launcher.py CONFIG -- COMMAND [ARGS...]')
    argv = sys.argv[3:]
    # Armed before the fork below: under `unshare -p` this process only waits outside the PID
    # namespace, and without it a gateway killed by SIGKILL left it, the init and the plugin running.
    die_with_parent(config.get('parentPid'), os.getppid)
    if config.get('pidNamespace'):
        enter_pid_namespace()
    try:
        os.setsid()
    except OSError:
        pass  # already a session leader (bwrap --new-session, or spawned detached)
    if config.get('nice'):
        os.nice(config['nice'])
    for name, (soft, hard) in config['rlimits'].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    if config.get('seccomp'):
        sys.path.insert(0, config['seccompModuleDir'])
        import seccomp_filter  # the Python sandbox's filter: no AF_INET sockets, no ptrace, ...
        filt = seccomp_filter.build_filter()
        if filt is None:
            fail('python3-seccomp is not installed')
        filt.load()
    # Node ignores SIGPIPE itself; a non-JS command gets the default dispositions back.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        os.execvpe(argv[0], argv, os.environ)
    except OSError as err:
        fail(f'cannot exec {argv[0]}: {err}')


def enter_pid_namespace():
    """Started by `unshare -p` without `--fork`: become the new PID namespace's init, run the plugin under it.

    `unshare --fork` would stay behind as the parent, holding every descriptor the gateway gave it,
    fd 3 among them: a plugin that closed its protocol channel and kept running was then noticed
    only at the call's time limit. So this launcher forks instead, and every process that only
    waits (this one, outside the namespace, and the namespace's init) closes fd 3 first: the
    plugin's copy is the only one, as under bwrap and without a sandbox.

    The plugin is not PID 1 itself: the kernel ignores default-action signals sent to a namespace's
    init, so it would survive SIGXCPU/SIGXFSZ until the hard limit's SIGKILL. The init reaps
    orphans and exits with the plugin's status (128+N for signal N); its exit takes every process of
    the namespace down with it. Returns only in the plugin's process (PID 2).
    """
    outer = os.getpid()
    init = os.fork()
    if init != 0:
        wait_for(init, reap_all=False)
    # PID 1 of the new namespace, in the mount namespace unshare made (propagation private).
    # getppid() is 0 in here; /proc is still the outer namespace's until mount_proc().
    die_with_parent(outer, ppid_from_proc)
    mount_proc()
    plugin = os.fork()
    if plugin != 0:
        wait_for(plugin, reap_all=True)
    die_with_parent(1, os.getppid)


def wait_for(child, reap_all):
    """Closes this process's copy of fd 3, waits for `child` and exits with its status; never returns."""
    try:
        os.close(3)
    except OSError:
        pass
    while True:
        try:
            pid, status = os.wait() if reap_all else os.waitpid(child, 0)
        except InterruptedError:
            continue
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            os._exit(128 - code if code < 0 else code)


def mount_proc():
    """A /proc of the new PID namespace (what `unshare --mount-proc` did): no host processes in it."""
    libc = ctypes.CDLL(None, use_errno=True)
    ms_nosuid, ms_nodev, ms_noexec, ms_rec, ms_private = 2, 4, 8, 1 << 14, 1 << 18
    if libc.mount(b'none', b'/proc', None, ms_rec | ms_private, None) != 0:
        fail(f'cannot make /proc private: {os.strerror(ctypes.get_errno())}')
    if libc.mount(b'proc', b'/proc', b'proc', ms_nosuid | ms_nodev | ms_noexec, None) != 0:
        fail(f'cannot mount /proc: {os.strerror(ctypes.get_errno())}')


def die_with_parent(expected_parent, read_ppid):
    """SIGKILL when the parent (the gateway, bwrap's init, or the launcher one level up) dies.

    The signal is armed only from here on: a parent that died since it forked us (the gateway
    killed while Python starts, the outer launcher between its fork and this call) would never
    send it, and we would run on, orphaned. So once armed, the parent must still be the one that
    forked us; `expected_parent` None: not known here (under bwrap the parent is bwrap's init,
    whose death takes its whole PID namespace down anyway)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass
    if expected_parent is not None and read_ppid() != expected_parent:
        fail(f'its parent {expected_parent} died before PR_SET_PDEATHSIG was armed')


def ppid_from_proc():
    """The parent's pid as /proc's namespace numbers it (getppid() says 0 for a PID namespace's init)."""
    with open('/proc/self/stat', 'rb') as f:
        stat = f.read()
    return int(stat[stat.rfind(b')') + 2:].split()[1])


def fail(message):
    sys.stderr.write(f'exec_launcher: {message}\n')
    sys.exit(SETUP_FAILED)


if __name__ == '__main__':
    main()
