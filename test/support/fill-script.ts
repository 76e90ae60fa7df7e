/**
 * A Python script that writes up to 16 MiB into each path given and prints, per path, what stopped
 * it (`ENOSPC`, `EROFS`, …) or `wrote`: how a sandbox test sees whether a mount is bounded.
 */
export const FILL_SCRIPT = `import errno, sys
def fill(path):
    try:
        with open(path, 'wb', buffering=0) as f:
            for _ in range(16):
                f.write(bytes(1 << 20))
        return 'wrote'
    except OSError as e:
        return errno.errorcode[e.errno]
print(' '.join(fill(p) for p in sys.argv[1:]))`;
