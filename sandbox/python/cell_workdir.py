"""Fresh working directories for cells, and their removal afterwards."""
import os
import shutil
import stat
import tempfile


def make_workdir(root, owner_uid=None):
    path = tempfile.mkdtemp(prefix='cell-', dir=root)
    if owner_uid is not None:
        os.chown(path, owner_uid, owner_uid)
    return path


def remove_workdir(path):
    if not path:
        return

    def retry(func, target, _exc):
        # A cell may leave directories without write or search permission for their owner.
        try:
            os.chmod(os.path.dirname(target), stat.S_IRWXU)
            if os.path.isdir(target) and not os.path.islink(target):
                os.chmod(target, stat.S_IRWXU)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=retry)
