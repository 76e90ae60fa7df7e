"""What the zygote loads once, before it forks any cell (research note §2)."""
import importlib
import io


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
    return loaded, failed
