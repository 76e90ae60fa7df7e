"""What a freshly forked cell process does before and around the executor.

Order matters: file descriptors first (so nothing of the zygote or of other cells leaks in),
then a new session, rlimits, the uid drop, the parent-death signal (credential changes reset
it), the fresh working directory, non-dumpable (after the uid drop, which would reset it), and
the seccomp filter last (it also sets no_new_privs).

With per-cell namespaces (cell_namespace.py) the zygote's child is the namespace's init
(`run_init`): it takes the file descriptors, sets up the namespace and forks the cell, which
then drops the capabilities it inherited and does the rest as above.
"""
import json
import os
import random
import resource
import signal
import sys

import cell_hooks
import cell_namespace
import cell_runtime
import process_tree

NOBODY = 65534
_FD_STDIN, _FD_OUT, _FD_ERR, _FD_CTL, _FD_LINES = 0, 1, 2, 3, 4
# As a plugin process is (PLUGIN_NICE): a cell and the processes it starts yield the CPU to the
# gateway's event loop. RLIMIT_CPU bounds each process, not the cell, so 64 forked spinners kept
# every core busy, at the gateway's priority, while the model went on writing.
CELL_NICE = 5


def _vm_size_bytes():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmSize:'):
                return int(line.split()[1]) * 1024
    return 0


def _move_fds(lines_r, out_w, ctl_w):
    # Park the three pipe ends above every target number first, so no dup2 below clobbers one.
    high = [_dup_high(fd) for fd in (lines_r, out_w, ctl_w)]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, _FD_STDIN)
    os.dup2(high[1], _FD_OUT)
    os.dup2(high[1], _FD_ERR)
    os.dup2(high[2], _FD_CTL, inheritable=False)
    os.dup2(high[0], _FD_LINES, inheritable=False)
    os.closerange(_FD_LINES + 1, _max_fd())


def _dup_high(fd):
    import fcntl
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64)


def _max_fd():
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY and soft < 1 << 20 else 1 << 20


def send(message):
    message['o'] = cell_runtime.output_bytes_written()
    data = (json.dumps(message) + '\n').encode()
    while data:
        data = data[os.write(_FD_CTL, data):]


def read_chunk():
    return os.read(_FD_LINES, 65536)


def apply_limits(limits):
    mib = 1024 * 1024
    cpu = int(limits['cpuSeconds'])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    # The child starts with the zygote's whole image mapped; the budget is on top of it.
    address_space = _vm_size_bytes() + int(limits['memoryMb']) * mib
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    fsize = int(limits['fileSizeMb']) * mib
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(limits['openFiles']), int(limits['openFiles'])))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    nproc = int(limits['maxProcesses'])
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def uid_mapped(uid):
    """Whether `uid` exists in our user namespace (`unshare -r` maps only our own uid, as 0)."""
    try:
        with open('/proc/self/uid_map') as f:
            for line in f:
                inside, _outside, count = (int(v) for v in line.split())
                if inside <= uid < inside + count:
                    return True
    except (OSError, ValueError):
        return False
    return False


def drop_uid():
    """Root ignores RLIMIT_NPROC and can read everything: cells run as nobody instead."""
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def setup(fds, config, parent_pid, seccomp_filter):
    """Turns the forked process into a cell; raises on any failure (the caller reports it).

    `fds` is None when the namespace's init already put them in place."""
    if fds is not None:
        _move_fds(*fds)
    os.setsid()
    if config.get('cellNamespaces'):
        cell_namespace.drop_capabilities()
    apply_limits(config['limits'])
    os.nice(CELL_NICE)
    if config['dropUid'] and os.geteuid() == 0:
        drop_uid()
    if not process_tree.die_with_parent(parent_pid):
        os._exit(70)  # the zygote (or the namespace's init) died between fork and prctl
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the zygote ignores it
    process_tree.set_child_subreaper()
    os.chdir(config['cwd'])
    os.environ['HOME'] = config['cwd']
    os.environ['TMPDIR'] = config['cwd']
    tempfile = sys.modules.get('tempfile')
    if tempfile is not None:
        tempfile.tempdir = config['cwd']  # the zygote already cached its own TMPDIR there
    sys.path[0] = config['cwd']
    # Inherited from the zygote already, but a uid change resets it: set it again, after the drop.
    process_tree.set_undumpable()
    if seccomp_filter is not None:
        seccomp_filter.load()
    _reseed()


def _reseed():
    # random re-seeds itself at fork; numpy's legacy global RNG does not (it would repeat in
    # every cell), nor does anything else that caches entropy.
    random.seed()
    numpy = sys.modules.get('numpy')
    if numpy is not None:
        try:
            numpy.random.seed()
        except Exception:
            pass


def probe():
    """What actually holds inside a cell, measured from inside one (for the protections report)."""
    import socket
    report = {'uid': os.getuid(), 'gid': os.getgid(), 'seccomp': False, 'inetDenied': False,
              'noNewPrivs': False, 'netns': os.readlink('/proc/self/ns/net'),
              'stdlibReadable': os.access(os.path.dirname(os.__file__), os.R_OK | os.X_OK)}
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('Seccomp:'):
                report['seccomp'] = line.split()[1] == '2'
            elif line.startswith('NoNewPrivs:'):
                report['noNewPrivs'] = line.split()[1] == '1'
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    except PermissionError:
        report['inetDenied'] = True
    except OSError:
        report['inetDenied'] = True
    limits = {}
    for name in ('CPU', 'AS', 'FSIZE', 'NOFILE', 'CORE', 'NPROC'):
        limits[name] = resource.getrlimit(getattr(resource, 'RLIMIT_' + name))[0]
    report['rlimits'] = limits
    # Per-cell namespaces: compared by the zygote with its own.
    report['ns'] = {name: os.readlink('/proc/self/ns/' + name) for name in ('pid', 'mnt', 'user', 'ipc', 'net')}
    report['capEff'] = cell_namespace.effective_capabilities()
    tmp = os.stat('/tmp')
    report['tmp'] = [tmp.st_dev, tmp.st_ino]
    return report


def _setup_failed(err):
    try:
        send({'t': 'result', 'ok': False, 'unitsRun': 0, 'exitCode': 70,
              'error': {'type': 'SandboxError', 'message': 'cell setup failed: %r' % (err,),
                        'compileError': False}})
    finally:
        os._exit(70)


def _ppid_from(stat_fd):
    stat = os.pread(stat_fd, 4096, 0)
    return int(stat[stat.rfind(b')') + 2:].split()[1])


def run_init(fds, config, zygote_pid, seccomp_filter):
    """Main of the namespace's init (PID 1, cloned by the zygote): never returns.

    Sets up the namespace, forks the cell (PID 2), reaps, and reports the cell's wait status as
    the control pipe's last line."""
    try:
        try:
            _move_fds(*fds)
            # Still the zygote's /proc: our parent as the zygote's namespace numbers it (getppid()
            # says 0 in here), read after the parent-death signal is armed.
            stat_fd = os.open('/proc/self/stat', os.O_RDONLY | os.O_CLOEXEC)
            os.setsid()
            cwd = cell_namespace.enter(config['cwd'], config['outerUid'], config['outerGid'])
            cell_namespace.drop_capabilities()
            if not process_tree.die_with_parent(zygote_pid, lambda: _ppid_from(stat_fd)):
                os._exit(70)
            os.close(stat_fd)
            process_tree.set_undumpable()
            cell_pid = os.fork()
        except BaseException as err:
            _setup_failed(err)
        if cell_pid == 0:
            run(None, dict(config, cwd=cwd), 1, seccomp_filter)
        status = cell_namespace.reap(cell_pid)
        # The leading newline ends whatever partial line the cell left in the pipe.
        data = ('\n' + json.dumps(cell_namespace.status_message(status)) + '\n').encode()
        while data:
            data = data[os.write(_FD_CTL, data):]
    finally:
        os._exit(0)


def run(fds, config, parent_pid, seccomp_filter):
    """Child main: never returns (os._exit), so no zygote state is ever finalized here."""
    try:
        setup(fds, config, parent_pid, seccomp_filter)
    except BaseException as err:
        _setup_failed(err)
    code = 0
    try:
        if config.get('probe'):
            send({'t': 'result', 'ok': True, 'unitsRun': 0, 'exitCode': 0, 'probe': probe()})
        else:
            from cell_executor import CellExecutor
            cell_runtime.install_stdio()
            executor = CellExecutor(config['filename'], send, read_chunk)
            cell_hooks.install(executor.source_as_file)
            if config['mode'] == 'whole':
                result = executor.run_whole()
            else:
                result = executor.run_incremental()
            send(dict(result, t='result'))
    except BaseException as err:
        code = 71
        try:
            send({'t': 'result', 'ok': False, 'unitsRun': 0, 'exitCode': code,
                  'error': {'type': 'SandboxError', 'message': 'executor failed: %r' % (err,),
                            'compileError': False}})
        except BaseException:
            # Only the cell's own code can take fd 3 or fd 4 away (os.closerange(3, …)); without
            # a word here the model read a bare "[exit status 71]".
            _tell_output('[execution stopped: the code closed the sandbox\'s pipes (fd %d and %d '
                         'are the runner\'s): %s]\n' % (_FD_CTL, _FD_LINES, err))
    os._exit(code)


def _tell_output(text):
    try:
        data = text.encode('utf-8', 'backslashreplace')
        while data:
            data = data[os.write(_FD_ERR, data):]
    except OSError:
        pass
