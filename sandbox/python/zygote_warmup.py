"""What the zygote loads once, before it forks any cell (research note §2)."""
import importlib
import io
import itertools
import sys


def preimport(names, prewarm):
    loaded, failed = [], []
    for name in names:
        try:
            if name.split('.')[0] == 'matplotlib':
                import matplotlib
                matplotlib.use('Agg')
            importlib.import_module(name)
            loaded.append(name)
        except BaseException as err:  # an optional library may be missing or broken
            failed.append({'name': name, 'error': '%s: %s' % (type(err).__name__, err)})
    if prewarm and 'matplotlib.pyplot' in loaded:
        try:
            import matplotlib.pyplot as plt
            fig = plt.figure()
            plt.plot([0, 1], [0, 1])
            fig.savefig(io.BytesIO(), format='png')
            plt.close(fig)
        except Exception as err:
            failed.append({'name': 'matplotlib prewarm', 'error': repr(err)})
    _restart_thread_names()
    return loaded, failed


def _restart_thread_names():
    """matplotlib.pyplot makes a Timer as it loads (the font-cache notice), which takes a number
    from threading's name counter: every cell's first thread was 'Thread-2', where a script that
    does not import pyplot itself names it 'Thread-1' (and says so in 'Exception in thread …')."""
    threading = sys.modules.get('threading')
    if threading is None:
        return
    if callable(getattr(threading, '_counter', None)):
        threading._counter = itertools.count(1).__next__
    elif isinstance(getattr(threading, '_counter', None), int):
        threading._counter = 0
