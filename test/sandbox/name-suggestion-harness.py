"""Compares name_suggestion.hint with the interpreter's own "Did you mean" for generated
AttributeErrors (seeded): prints one line per difference, then the count of cases checked."""
import io
import random
import sys

sys.path.insert(0, sys.argv[1])
import name_suggestion  # noqa: E402

random.seed(int(sys.argv[2]))
LETTERS = 'abcdeABCDE_xyz01é'


def word(n):
    return ''.join(random.choice(LETTERS) for _ in range(n))


def typo(name):
    chars = list(name)
    for _ in range(random.randint(0, 6)):
        i = random.randrange(len(chars) + 1)
        roll = random.random()
        if roll < 0.25:
            chars.insert(i, random.choice(LETTERS))
        elif chars and roll < 0.45:
            chars[min(i, len(chars) - 1)] = chars[min(i, len(chars) - 1)].swapcase()
        elif chars and roll < 0.6:
            chars.pop(min(i, len(chars) - 1))
        elif chars:
            chars[min(i, len(chars) - 1)] = random.choice(LETTERS)
    return ''.join(chars) or 'q'


class Holder:
    pass


checked = 0
for _ in range(int(sys.argv[3])):
    holder = Holder()
    names = [word(random.randint(1, random.choice([12, 50]))) for _ in range(random.choice([3, 30, 760]))]
    # Near misses of one another, so that which is closest decides the answer.
    names += [typo(name) for name in random.sample(names, 3)]
    for name in names:
        setattr(holder, name, 1)
    wrong = typo(random.choice(names))
    try:
        getattr(holder, wrong)
        continue
    except AttributeError as err:
        caught = err
    shown = io.StringIO()
    sys.stderr, saved = shown, sys.stderr
    try:
        sys.__excepthook__(type(caught), caught, None)
    finally:
        sys.stderr = saved
    real = shown.getvalue().splitlines()[-1][len(f'AttributeError: {caught}'):]
    mine = name_suggestion.hint(caught)
    if mine != real:
        print(f'{wrong!r}: interpreter {real!r}, sandbox {mine!r}')
    checked += 1
print('checked', checked)
