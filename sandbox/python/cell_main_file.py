"""A cell's `__main__` gets a file when something asks for `__main__.__file__`, as a script's has.

multiprocessing's `spawn` and `forkserver` start methods (`forkserver` is Linux's default from
Python 3.14) start each child as a new interpreter, which runs the parent's main module again,
from `__main__.__file__`, as `__mp_main__` before it unpickles the function it is to call. A cell's
module had no file: every worker failed with "Can't get attribute 'f' on <module '__main__'
(built-in)>" and a Pool started new ones until the cell's wall clock.

Asked for, `__file__` writes the cell's code up to the end of the statement running now into the
cell's working directory and returns that path. Lines after it may still be arriving (a partial
block would not even compile in the child); a script's child that gets past the running statement
without an `if __name__ == '__main__':` guard starts the pool again and fails anyway. Nothing is
written until something asks (multiprocessing, `inspect`, `repr` of the module, a statement whose
code names `__file__`), so the working directory of a cell that does not stays empty.
"""
import os
import sys
import tempfile
import types


def main_module(filename, source):
    """A fresh `__main__` whose `__file__` is `filename`'s base name in the current directory,
    holding `source()` whenever it is read; code that assigns `__file__` gets its own value."""
    path = os.path.join(os.getcwd(), os.path.basename(filename) or 'main.py')

    class CellMainModule(types.ModuleType):
        @property
        def __file__(self):
            value = self.__dict__.get('__file__', path)
            if value is not path:
                return value
            try:
                _replace(path, source())
            except OSError as err:
                # getattr(module, '__file__', None) then reads None, as before.
                raise AttributeError('__file__ (%s)' % err) from None
            return path

        @__file__.setter
        def __file__(self, value):
            self.__dict__['__file__'] = value

    module = CellMainModule('__main__')
    # The cell's own code looks the name up in the module's dict, past the property: there it is
    # the path (a script's `Path(__file__).parent` was a NameError); the executor writes the file
    # before a statement that names it runs (`mentions_file`).
    module.__dict__['__file__'] = path
    _script_names(module, sys.modules['__main__'])
    return module


def _script_names(module, zygote_main):
    """The names a script's `__main__` starts with besides a module's own: the interpreter gives
    every main module an empty `__annotations__` and a run file a `__cached__` of None. The
    zygote's main module is a script's, so it says which this interpreter sets. Without them,
    `print(__annotations__)` before any annotation was a NameError where a script prints `{}`."""
    names = vars(zygote_main)
    if '__annotations__' in names:
        module.__annotations__ = {}
    if '__cached__' in names:
        module.__cached__ = None


def mentions_file(code):
    """Whether `code` or a function, class or comprehension in it names `__file__`."""
    if '__file__' in code.co_names:
        return True
    return any(isinstance(const, types.CodeType) and mentions_file(const) for const in code.co_consts)


def _replace(path, text):
    """Written whole, then renamed over the old file: a Pool asks once per worker it starts, and
    a worker reading the file while the next start truncated it found no `f` (seen under load)."""
    fd, temp = tempfile.mkstemp(prefix='.main-', dir=os.path.dirname(path))
    try:
        with open(fd, 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write(text)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
