import { execFile } from 'node:child_process';
import { accessSync, chmodSync, constants, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SandboxError } from '../core/errors.ts';
import type { PythonSandboxLimits } from './python-sandbox-options.ts';
import { makeStagingDir } from './stale-staging.ts';

/** The isolation a zygote actually runs under (after detection). */
export type SandboxMode = 'bwrap' | 'netns' | 'none';

export const PYTHON_SOURCE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'python');
const NOBODY = 65534;
/** Where the zygote's scripts appear inside bubblewrap. */
const SCRIPTS_IN_SANDBOX = '/opt/conveyor-python';

export interface InterpreterInfo {
  executable: string;
  version: string;
  /** Directories the interpreter needs to see: prefixes and sys.path entries. */
  paths: string[];
}

const interpreterInfoSchema = z.object({ executable: z.string().min(1), version: z.string(), paths: z.array(z.string()) });

/** Asks the interpreter where it really lives (a pyenv shim resolves to the real binary here). */
export function inspectInterpreter(python: string): Promise<InterpreterInfo> {
  const script =
    'import sys, json; print(json.dumps({"executable": sys.executable, "version": sys.version.split()[0],' +
    ' "paths": [p for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix] + sys.path if p]}))';
  return new Promise((resolvePromise, reject) => {
    execFile(python, ['-I', '-c', script], { timeout: 15_000 }, (error, stdout, stderr) => {
      if (error) {
        // execFile's message quotes the whole -c script: the exit status or errno says more.
        const why = stderr.trim() || (typeof error.code === 'number' ? `it exited with status ${error.code}` : String(error.code ?? error.message));
        reject(new SandboxError(`cannot run the Python interpreter ${python}: ${why} (name another with --python PATH, or run without the python tool: --plugins '{"python":false}')`, { cause: error }));
        return;
      }
      try {
        resolvePromise(interpreterInfoSchema.parse(JSON.parse(stdout)));
      } catch (cause) {
        reject(new SandboxError(`unexpected answer from ${python}: ${stdout.slice(0, 200)}`, { cause }));
      }
    });
  });
}

export function findExecutable(name: string): string | null {
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(delimiter).concat(['/usr/bin', '/bin', '/usr/sbin'])) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

export const STAGING_PREFIX = 'conveyor-python-';

/**
 * Copies the zygote's scripts into a fresh world-readable directory: the zygote may run as
 * nobody (bwrap as root), which cannot read a checkout under a private home directory.
 */
export function stageScripts(): { root: string; scripts: string; cells: string } {
  const root = makeStagingDir(STAGING_PREFIX);
  chmodSync(root, 0o755);
  const scripts = join(root, 'scripts');
  mkdirSync(scripts, { mode: 0o755 });
  for (const name of readdirSync(PYTHON_SOURCE_DIR)) {
    if (!name.endsWith('.py')) continue;
    copyFileSync(join(PYTHON_SOURCE_DIR, name), join(scripts, name));
    chmodSync(join(scripts, name), 0o644);
  }
  // Cell working directories (non-bwrap modes): traversable, not listable, by the cell uid.
  const cells = join(root, 'cells');
  mkdirSync(cells, { mode: 0o711 });
  chmodSync(cells, 0o711);
  mkdirSync(join(root, 'home'), { mode: 0o700 });
  return { root, scripts, cells };
}

export interface LaunchPlan {
  mode: SandboxMode;
  command: string;
  args: string[];
  env: Record<string, string>;
  uid?: number;
  gid?: number;
}

export interface LaunchContext {
  interpreter: InterpreterInfo;
  staging: { root: string; scripts: string; cells: string };
  /** JSON config passed to zygote.py as argv[1]. */
  config: string;
  /** Size of the tmpfs at /tmp under bwrap (see tmpfsBytes). */
  tmpBytes: number;
}

/**
 * Size of bwrap's /tmp, which holds every cell's working directory and is shared by all cells of
 * one zygote (with per-cell namespaces each cell sees only its own directory there, as its /tmp
 * and /dev/shm, but all of them count against this one tmpfs). It is RAM that no RLIMIT_AS counts
 * and that outlives the cell that wrote it, so it is capped at one cell's memory budget
 * (`memoryMb`; 1 GiB by default): /tmp can pin at most as much as one more cell could. At least
 * two files at the file-size limit always fit, however small `memoryMb` is. Past it, writes fail
 * with ENOSPC. bwrap's /dev/shm gets the same size (boundedDev): only the zygote, and cells
 * without namespaces of their own, see it; a cell with them has a directory on /tmp there.
 */
export function tmpfsBytes(limits: Pick<PythonSandboxLimits, 'memoryMb' | 'fileSizeMb'>): number {
  return Math.max(limits.memoryMb, 2 * limits.fileSizeMb) * 1024 * 1024;
}

function withCellNamespaces(config: string): string {
  return JSON.stringify({ ...(JSON.parse(config) as Record<string, unknown>), cellNamespaces: true });
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** The user name a cell's code sees ($USER, $LOGNAME, getpass.getuser()), whatever its uid. */
export const SANDBOX_USER = 'sandbox';

function baseEnv(home: string, tmp: string): Record<string, string> {
  // Built from scratch: nothing of the gateway's environment (API keys…) reaches a cell.
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    HOME: home,
    // getpass.getuser() reads these before the passwd file, which has no entry for the cells' uid
    // in the sandbox (bwrap binds no /etc/passwd): without them it raised KeyError. One fixed
    // name, so output does not depend on the mode or the host's user.
    USER: SANDBOX_USER,
    LOGNAME: SANDBOX_USER,
    TMPDIR: tmp,
    MPLCONFIGDIR: join(tmp, '.matplotlib'),
    MPLBACKEND: 'Agg',
    OPENBLAS_NUM_THREADS: '1',
    OMP_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    // glibc reserves 64 MiB of address space for each thread's own malloc arena, which RLIMIT_AS
    // counts: with 1024 MB a cell could start only 16 threads, not the `maxProcesses` it is given.
    MALLOC_ARENA_MAX: '2',
  };
}

export function planLaunch(mode: SandboxMode, ctx: LaunchContext): LaunchPlan {
  const { interpreter, staging, config } = ctx;
  if (mode === 'bwrap') {
    const bwrap = findExecutable('bwrap');
    if (!bwrap) throw new SandboxError('bwrap is not installed');
    const args = [
      '--unshare-all',
      // The zygote itself is PID 1 of the sandbox, not a bwrap reaper: that reaper was dumpable,
      // unfiltered and of the cells' uid (a cell could write its memory through /proc/1/mem), and
      // the kernel drops every signal a cell sends to PID 1 that it has no handler for, so a cell
      // can no longer kill the zygote and with it every other cell. It reaps as it did: it is
      // already the subreaper of everything its cells leave behind.
      '--as-pid-1',
      '--die-with-parent',
      '--new-session',
      ...systemBinds(),
      ...interpreterBinds(interpreter),
      '--proc', '/proc',
      ...boundedDev(String(ctx.tmpBytes)),
      // Sized (tmpfsBytes): an unbounded tmpfs let a cell pin host RAM past its own lifetime.
      '--size', String(ctx.tmpBytes), '--tmpfs', '/tmp',
      '--ro-bind', staging.scripts, SCRIPTS_IN_SANDBOX,
      // bwrap's root is a tmpfs the sandbox uid owns: make it read-only, or one cell could plant
      // files (say /etc/ld.so.preload) that every later cell would load.
      '--remount-ro', '/',
      '--chdir', '/tmp',
      '--',
      // Each cell in its own user, PID, IPC and mount namespaces (python/cell_namespace.py): its
      // own /proc, /tmp and /dev/shm. Elsewhere the zygote is root or the host's: not attempted.
      interpreter.executable, '-I', '-B', `${SCRIPTS_IN_SANDBOX}/zygote.py`, withCellNamespaces(config),
    ];
    const plan: LaunchPlan = { mode, command: bwrap, args, env: baseEnv('/tmp', '/tmp') };
    // As root, bwrap would keep every capability inside its user namespace; as nobody it keeps
    // none, and RLIMIT_NPROC then applies to the cells.
    if (isRoot()) {
      plan.uid = NOBODY;
      plan.gid = NOBODY;
    }
    return plan;
  }
  const python = [interpreter.executable, '-I', '-B', join(staging.scripts, 'zygote.py'), config];
  const env = baseEnv(join(staging.root, 'home'), staging.cells);
  env['MPLCONFIGDIR'] = join(staging.root, 'home', '.matplotlib');
  if (mode === 'netns') {
    const unshare = findExecutable('unshare');
    if (!unshare) throw new SandboxError('unshare is not installed');
    // Without root, `-r` maps us to root in a new user namespace so that `-n` is allowed.
    const flags = isRoot() ? ['-n'] : ['-r', '-n'];
    return { mode, command: unshare, args: [...flags, '--', ...python], env };
  }
  const [command, ...args] = python as [string, ...string[]];
  return { mode, command, args, env };
}

/**
 * bwrap's /dev, with nothing writable in it but a /dev/shm of `shmBytes`. `--dev` mounts a tmpfs
 * of the sandbox uid with no size, /dev/shm a plain directory in it: a process could fill host RAM
 * through either (bwrap 0.8 takes `--size` only before `--tmpfs`, not `--dev`). The remount is not
 * recursive: the device nodes, /dev/pts and the sized /dev/shm stay usable.
 */
export function boundedDev(shmBytes: string): string[] {
  return ['--dev', '/dev', '--size', shmBytes, '--tmpfs', '/dev/shm', '--remount-ro', '/dev'];
}

/** Read-only views of the system parts Python, numpy and matplotlib need; nothing else of /etc. */
export function systemBinds(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const path = `/${name}`;
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (stat.isDirectory()) args.push('--ro-bind', path, path);
  }
  // /etc/alternatives: libblas.so.3 for numpy; /etc/matplotlibrc: Debian's matplotlib refuses to
  // import without it; fonts and ld.so.cache: faster, quieter startup.
  for (const path of ['/etc/alternatives', '/etc/matplotlibrc', '/etc/fonts', '/etc/ld.so.cache', '/etc/localtime']) {
    if (existsSync(path)) args.push('--ro-bind', path, path);
  }
  for (const name of safeReaddir('/etc')) {
    if (/^python3(\.\d+)?$/.test(name)) args.push('--ro-bind', `/etc/${name}`, `/etc/${name}`);
  }
  return args;
}

function interpreterBinds(info: InterpreterInfo): string[] {
  const wanted = [dirname(info.executable), ...info.paths]
    .map((p) => resolve(p))
    .filter((p) => existsSync(p) && !p.startsWith('/usr/') && p !== '/usr')
    .sort((a, b) => a.length - b.length);
  const bound: string[] = [];
  for (const path of wanted) {
    if (bound.some((b) => path === b || path.startsWith(`${b}/`))) continue;
    bound.push(path);
  }
  return bound.flatMap((p) => ['--ro-bind', p, p]);
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Modes to try, strongest first, for a requested option. */
export function candidateModes(option: 'auto' | SandboxMode): SandboxMode[] {
  if (option !== 'auto') return [option];
  const modes: SandboxMode[] = [];
  if (findExecutable('bwrap')) modes.push('bwrap');
  if (findExecutable('unshare')) modes.push('netns');
  modes.push('none');
  return modes;
}
