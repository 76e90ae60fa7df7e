import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandboxError } from '../../core/errors.ts';
import { hiddenUnder } from './checkout-secrets.ts';
import { boundedDev, findExecutable, PYTHON_SOURCE_DIR, systemBinds, type SandboxMode } from '../python-launch.ts';

/** Per-process limits of runtime `process` (the isolate host uses the same, minus CPU). */
export interface ProcessLimits {
  /** The call's time limit, the tool's time rather than the model's: call-clock.ts counts it (then the process tree is killed). */
  timeoutMs: number;
  /** RLIMIT_CPU (soft; SIGKILL one second later). */
  cpuSeconds: number;
  /** JS children: V8 heap (--max-old-space-size); RLIMIT_DATA gets `nodeDataHeadroomMb()` more. Other commands: RLIMIT_DATA. */
  memoryMb: number;
  /** RLIMIT_FSIZE. */
  fileSizeMb: number;
  /** RLIMIT_NPROC for the call's own uid (only when calls get their own uid, i.e. as root). */
  maxProcesses: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** stdout+stderr bytes before the process is killed. */
  outputBytes: number;
  /** Size of the writable tmpfs at the working directory and at /tmp (bwrap only). */
  diskMb: number;
}

export const DEFAULT_PROCESS_LIMITS: Readonly<ProcessLimits> = Object.freeze({
  timeoutMs: 30_000,
  cpuSeconds: 10,
  memoryMb: 256,
  fileSizeMb: 16,
  maxProcesses: 64,
  openFiles: 256,
  outputBytes: 1024 * 1024,
  diskMb: 64,
});

/** Node's own data (code space, threads' stacks, tsx) on top of its JS heap. */
const NODE_OWN_DATA_MB = 256;
let codeRangeMb: number | undefined;

/**
 * RLIMIT_DATA a Node child with `isolates` V8 isolates (its main thread, tsx's module-hooks
 * thread, workers) needs beyond its JS heap: its own data, plus each isolate's code range where
 * the build maps it writable and executable up front. Node 24 on x64 reserves 510 MiB that way
 * per isolate; the kernel counts it against RLIMIT_DATA although it is never touched, so a fixed
 * 256 MiB killed every child at start ("Failed to reserve virtual memory for CodeRange") and the
 * sandbox probe fell back to no limits at all. Node 20 and 22 reserve none. The children run this
 * process's Node binary, so this process's own mappings give the size. Read once.
 */
export function nodeDataHeadroomMb(isolates: number): number {
  return NODE_OWN_DATA_MB + isolates * v8CodeRangeMb();
}

/** What one V8 isolate of this Node maps writable and executable at its start, MiB (0 on Node 20 and 22). */
export function v8CodeRangeMb(): number {
  codeRangeMb ??= Math.ceil(largestWritableExecutableMapping() / (1024 * 1024));
  return codeRangeMb;
}

/** The largest private mapping of this process that is writable and executable (/proc/self/maps): one isolate's code range. */
function largestWritableExecutableMapping(): number {
  let maps: string;
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return 0;
  }
  let largest = 0;
  for (const line of maps.split('\n')) {
    // "start-end perms offset dev inode path", e.g. "7f00…-7f20… rwxp 00000000 00:00 0"
    const space = line.indexOf(' ');
    if (line.slice(space + 1, space + 5) !== 'rwxp') continue;
    const dash = line.indexOf('-');
    largest = Math.max(largest, parseInt(line.slice(dash + 1, space), 16) - parseInt(line.slice(0, dash), 16));
  }
  return largest;
}

/** How processes are wrapped on this machine (decided once, by probing: process-sandbox.ts). */
export interface SandboxSetup {
  mode: SandboxMode;
  /** What applies rlimits: the Python launcher (also loads seccomp), util-linux prlimit, or nothing. */
  launcher: 'python' | 'prlimit' | 'none';
  python: string | null;
  seccomp: boolean;
  /** Run each process as its own unprivileged uid (possible only as root). */
  uidDrop: boolean;
}

export interface ProcessSpec {
  /** The command as it runs inside the sandbox (absolute paths). */
  argv: string[];
  /** Host paths the process may read (bound read-only under bwrap). */
  readOnlyPaths: string[];
  limits: ProcessLimits;
  /** RLIMIT_DATA in MiB (memoryMb plus the runtime's own headroom). */
  dataMb: number;
  /**
   * RLIMIT_CPU in seconds (limits.cpuSeconds plus the runtime's own start-up); null for
   * long-lived hosts, whose CPU time adds up over many calls.
   */
  cpuSeconds: number | null;
  uid: number | null;
  /** Working directory on the host for modes without bwrap (bwrap gets a sized tmpfs). */
  hostCwd: string;
  extraEnv?: Record<string, string>;
}

export interface ProcessLaunchPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  uid?: number;
  gid?: number;
}

/** Plugins yield the CPU to the gateway's event loop (streaming tokens to clients comes first). */
const PLUGIN_NICE = 5;

/** Where the working directory appears inside bwrap. */
export const SANDBOX_CWD = '/home/plugin';
export const LAUNCHER_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'exec_launcher.py');
/** The gateway's package root: plugin-host.ts, the kit and node_modules live below it. */
export const GATEWAY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

export function planProcessLaunch(setup: SandboxSetup, spec: ProcessSpec): ProcessLaunchPlan {
  const inner = [...launcherPrefix(setup, spec), ...spec.argv];
  const bwrapped = setup.mode === 'bwrap';
  // Built from scratch: nothing of the gateway's environment (API keys…) reaches a plugin.
  const home = bwrapped ? SANDBOX_CWD : spec.hostCwd;
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    HOME: home,
    TMPDIR: bwrapped ? '/tmp' : spec.hostCwd,
    ...spec.extraEnv,
  };
  const ids = spec.uid !== null ? { uid: spec.uid, gid: spec.uid } : {};
  if (setup.mode === 'bwrap') {
    const bwrap = findExecutable('bwrap');
    if (!bwrap) throw new SandboxError('bwrap is not installed');
    const bytes = String(spec.limits.diskMb * 1024 * 1024);
    const args = [
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      ...systemBinds(),
      '--proc', '/proc',
      ...boundedDev(bytes),
      // Before the binds: a read-only path under /tmp (a Node install, a checkout) stays visible.
      '--size', bytes, '--tmpfs', '/tmp',
      ...readOnlyBinds([...spec.readOnlyPaths, ...launcherPaths(setup)]),
      '--size', bytes, '--tmpfs', SANDBOX_CWD,
      // bwrap's root is a tmpfs the sandbox uid owns: read-only, or a plugin could plant files.
      '--remount-ro', '/',
      '--chdir', SANDBOX_CWD,
      '--',
      ...inner,
    ];
    return { command: bwrap, args, env, cwd: spec.hostCwd, ...ids };
  }
  if (setup.mode === 'netns') {
    const unshare = findExecutable('unshare');
    if (!unshare) throw new SandboxError('unshare is not installed');
    // A PID namespace too: when its first process dies the kernel kills every process in it, so
    // nothing that double-forked away survives the call. As a non-root uid, -r is needed first.
    // With the Python launcher, unshare does not fork: `unshare --fork` waits as the parent and
    // holds fd 3 all along, so a plugin that closed it was never noticed. The launcher forks the
    // namespace's init and mounts its /proc itself, and its waiting processes close fd 3
    // (exec_launcher.py). Without it, unshare forks, and a closed fd 3 is seen only at the time limit.
    const user = isRoot() && spec.uid === null ? [] : ['-r'];
    const flags = pidNamespaceByLauncher(setup) ? ['-n', '-p', '-m'] : ['-n', '-p', '-f', '--kill-child', '--mount-proc'];
    return { command: unshare, args: [...user, ...flags, '--', ...inner], env, cwd: spec.hostCwd, ...ids };
  }
  const [command, ...args] = inner as [string, ...string[]];
  return { command, args, env, cwd: spec.hostCwd, ...ids };
}

function launcherPrefix(setup: SandboxSetup, spec: ProcessSpec): string[] {
  const { limits } = spec;
  const mib = 1024 * 1024;
  const rlimits: Record<string, [number, number]> = {
    RLIMIT_DATA: [spec.dataMb * mib, spec.dataMb * mib],
    RLIMIT_FSIZE: [limits.fileSizeMb * mib, limits.fileSizeMb * mib],
    RLIMIT_NOFILE: [limits.openFiles, limits.openFiles],
    RLIMIT_CORE: [0, 0],
  };
  if (spec.cpuSeconds !== null) rlimits['RLIMIT_CPU'] = [spec.cpuSeconds, spec.cpuSeconds + 1];
  if (processLimitApplies(setup, spec.uid)) rlimits['RLIMIT_NPROC'] = [limits.maxProcesses, limits.maxProcesses];
  if (setup.launcher === 'python' && setup.python) {
    // Who the launcher's parent must be once its PR_SET_PDEATHSIG is armed (exec_launcher.py): this
    // process, which spawns it (unshare execs without forking). Under bwrap it is bwrap's init.
    const parentPid = setup.mode === 'bwrap' ? null : process.pid;
    const config = { rlimits, seccomp: setup.seccomp, seccompModuleDir: PYTHON_SOURCE_DIR, nice: PLUGIN_NICE, pidNamespace: pidNamespaceByLauncher(setup), parentPid };
    return [setup.python, '-I', LAUNCHER_SCRIPT, JSON.stringify(config), '--'];
  }
  if (setup.launcher === 'prlimit') {
    const prlimit = findExecutable('prlimit');
    if (!prlimit) throw new SandboxError('prlimit is not installed');
    const names: Record<string, string> = {
      RLIMIT_DATA: 'data', RLIMIT_FSIZE: 'fsize', RLIMIT_NOFILE: 'nofile', RLIMIT_CORE: 'core', RLIMIT_CPU: 'cpu', RLIMIT_NPROC: 'nproc',
    };
    return [prlimit, ...Object.entries(rlimits).map(([k, [soft, hard]]) => `--${names[k]}=${soft}:${hard}`), '--'];
  }
  return [];
}

/** `unshare -p` without `--fork`: the Python launcher becomes the namespace's init (exec_launcher.py). */
function pidNamespaceByLauncher(setup: SandboxSetup): boolean {
  return setup.mode === 'netns' && setup.launcher === 'python' && setup.python !== null;
}

/** The launcher script and the seccomp filter it loads must be visible inside the sandbox too. */
function launcherPaths(setup: SandboxSetup): string[] {
  return setup.launcher === 'python' ? [dirname(LAUNCHER_SCRIPT), PYTHON_SOURCE_DIR] : [];
}

/**
 * Whether RLIMIT_NPROC can bound a plugin's processes. The kernel counts the processes of the uid
 * in the current user namespace (Linux >= 5.14): exact for a uid of the call's own, or inside a
 * user namespace of the call's own (bwrap, unshare -r, as a non-root gateway). For a plugin that
 * shares the gateway's uid without one it would count the gateway's processes too, so it is not set.
 */
export function processLimitApplies(setup: SandboxSetup, uid: number | null): boolean {
  if (setup.launcher === 'none') return false;
  return uid !== null || (setup.mode !== 'none' && !isRoot());
}

/** Read-only binds for the given host paths, hiding secrets that commonly sit in a checkout (checkout-secrets.ts). */
function readOnlyBinds(paths: string[]): string[] {
  const unique = [...new Set(paths.map((p) => resolve(p)))]
    .filter((p) => existsSync(p) && p !== '/usr' && !p.startsWith('/usr/'))
    .sort((a, b) => a.length - b.length)
    .filter((p, i, all) => !all.slice(0, i).some((q) => p.startsWith(`${q}/`)));
  const args: string[] = [];
  for (const path of unique) {
    args.push('--ro-bind', path, path);
    const hidden = hiddenUnder(path);
    // Read-only too: an empty tmpfs the plugin's uid owns, unsized, was host RAM it could fill.
    for (const dir of hidden.dirs) args.push('--tmpfs', dir, '--remount-ro', dir);
    for (const file of hidden.files) args.push('--ro-bind', '/dev/null', file);
  }
  return args;
}

/** The launcher's interpreter: Debian's python3 (where python3-seccomp lives), under /usr. */
export function launcherPython(): string | null {
  if (existsSync('/usr/bin/python3')) return '/usr/bin/python3';
  const found = findExecutable('python3');
  return found && found.startsWith('/usr/') ? found : null;
}

/** Install prefix of this Node binary, when it lives outside /usr (it must be visible inside bwrap). */
export function nodePrefix(): string {
  return resolve(dirname(process.execPath), '..');
}
