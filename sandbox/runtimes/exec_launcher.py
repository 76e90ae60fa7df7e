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
    if config.get('init') and os.getpid() == 1:
        become_init()
    try:
        os.setsid()
    except OSError:
        pass  # already a session leader (bwrap --new-session, or spawned detached)
    try:
        # Dies with its parent (the gateway, or bwrap's monitor) even if nobody kills it.
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass
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


def become_init():
    """As PID 1 of a fresh PID namespace (unshare -p -f), stay behind as its init.

    The kernel ignores default-action signals sent to a namespace's init, so a plugin running as
    PID 1 would survive SIGXCPU/SIGXFSZ until the hard limit's SIGKILL. Here the plugin runs as
    PID 2; this init reaps orphans and exits with the plugin's status (128+N for signal N), and
    its exit takes every process of the namespace down with it.
    """
    child = os.fork()
    if child != 0:
        while True:
            pid, status = os.wait()
            if pid == child:
                code = os.waitstatus_to_exitcode(status)
                os._exit(128 - code if code < 0 else code)


def fail(message):
    sys.stderr.write(f'exec_launcher: {message}\n')
    sys.exit(SETUP_FAILED)


if __name__ == '__main__':
    main()
