"""The zygote's start-up probe: one throw-away cell with the full setup, asked what held inside it.

Its report decides what cells get: per-cell namespaces only when the probe showed them real
(`isolated`), the uid drop only when the dropped uid can still read the interpreter.
"""
import json
import os
import signal
import time

import cell_workdir


def run(fork, limits):
    """Forks a probe cell with `fork(config)`; returns (its report or None, why there is none)."""
    try:
        pid, pidfd, (lines_w, out_r, ctl_r), cwd = fork({'probe': True, 'limits': limits})
    except OSError as err:
        return None, str(err)
    os.close(lines_w)
    deadline = time.monotonic() + 10
    chunks = []
    while time.monotonic() < deadline:
        try:
            data = os.read(ctl_r, 65536)
        except BlockingIOError:
            time.sleep(0.002)
            continue
        if not data:
            break
        chunks.append(data)
    try:
        os.kill(pid, signal.SIGKILL)  # normally gone already; never wait on a stuck probe
    except OSError:
        pass
    os.waitpid(pid, 0)
    for fd in (ctl_r, out_r) + ((pidfd,) if pidfd is not None else ()):
        os.close(fd)
    cell_workdir.remove_workdir(cwd)
    error = None
    for line in b''.join(chunks).splitlines():
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get('probe'):
            return message['probe'], None
        if message.get('t') == 'result' and isinstance(message.get('error'), dict):
            error = message['error'].get('message')
    return None, error


def isolated(report, cell_root):
    """Whether the probe cell had namespaces of its own, no capabilities and a /tmp of its own."""
    if report is None or not isinstance(report.get('ns'), dict):
        return False
    own = {name: os.readlink('/proc/self/ns/' + name) for name in report['ns']}
    tmp = os.stat(cell_root)
    return (all(report['ns'][name] != own[name] for name in own) and report.get('capEff') == 0
            and report.get('tmp') != [tmp.st_dev, tmp.st_ino])
