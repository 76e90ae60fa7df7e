import { execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { candidateModes, findExecutable, type SandboxMode } from '../python-launch.ts';
import { killProcessTree } from '../process-tree.ts';
import { DEFAULT_PROCESS_LIMITS, GATEWAY_ROOT, launcherPython, nodeDataHeadroomMb, nodePrefix, planProcessLaunch, processLimitApplies, type SandboxSetup } from './process-launch.ts';

/** What protects the host from a plugin process, as measured by a probe process at startup (GET /health). */
export interface ProcessProtections {
  mode: SandboxMode;
  /** bubblewrap: own mount/PID/IPC/UTS/network/user namespaces; only /usr, the gateway's package (read-only) and a sized tmpfs are visible. */
  bwrap: boolean;
  /** The process's network namespace is not the gateway's: no route to host services. */
  netns: boolean;
  /** socket(AF_INET) fails with EPERM (seccomp filter). */
  seccomp: boolean;
  /** Each process runs as an unprivileged uid of its own (root only): calls cannot signal or read each other. */
  uidDrop: boolean;
  /** Own PID namespace: the gateway's processes are invisible, and nothing outlives the call's first process. */
  pidNamespace: boolean;
  /** The environment is rebuilt from scratch (always). */
  envScrubbed: true;
  /** What applies rlimits. */
  launcher: SandboxSetup['launcher'];
  /** Limits seen from inside the probe (-1 = not set by the sandbox, unlimited or unknown). */
  rlimits: { cpuSeconds: number; dataMb: number; fileSizeMb: number; openFiles: number; maxProcesses: number };
  /** Stronger setups that were tried and failed, and why. */
  fallbacks: Array<{ mode: SandboxMode; uidDrop: boolean; error: string }>;
  warnings: string[];
}

const probeSchema = z.object({
  uid: z.number(),
  pid: z.number(),
  netns: z.string(),
  seccomp: z.string(),
  inet: z.string(),
  rootReadable: z.boolean(),
  limits: z.record(z.string(), z.number()),
});
type Probe = z.infer<typeof probeSchema>;

// Runs inside the sandbox with the full setup and reports what it can do from there.
const PROBE_SCRIPT = `
const fs = require('fs'), net = require('net');
const read = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch { return ''; } };
const limits = {};
for (const line of read('/proc/self/limits').split('\\n')) {
  const m = /^Max (cpu time|data size|file size|open files|processes)\\s+(\\S+)/.exec(line);
  if (m) limits[m[1]] = m[2] === 'unlimited' ? -1 : Number(m[2]);
}
let rootReadable = true;
try { fs.accessSync(process.argv[1] + '/package.json', fs.constants.R_OK); } catch { rootReadable = false; }
let netns = ''; try { netns = fs.readlinkSync('/proc/self/ns/net'); } catch {}
const out = { uid: process.getuid(), pid: process.pid, netns, seccomp: (/Seccomp:\\s*(\\d)/.exec(read('/proc/self/status')) || [])[1] || '0', rootReadable, limits };
const s = net.connect({ host: '127.0.0.1', port: 9 });
s.on('error', (e) => { out.inet = e.code || 'error'; console.log(JSON.stringify(out)); process.exit(0); });
s.on('connect', () => { out.inet = 'connected'; console.log(JSON.stringify(out)); process.exit(0); });
`;

export interface ProbeOptions {
  mode: 'auto' | SandboxMode;
  /** Uid the probe (and isolate hosts) run as when dropping privileges. */
  probeUid: number;
  /** Try per-process uids (root only). */
  uidDrop: boolean;
}

/** Tries the strongest setup first ('auto': bwrap, netns, none) and keeps the first whose probe holds. */
export async function detectProcessSandbox(options: ProbeOptions): Promise<{ setup: SandboxSetup; protections: ProcessProtections }> {
  const python = launcherPython();
  const seccomp = python !== null && (await canImportSeccomp(python));
  const launcher: SandboxSetup['launcher'] = python ? 'python' : findExecutable('prlimit') ? 'prlimit' : 'none';
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const fallbacks: ProcessProtections['fallbacks'] = [];
  const hostNetns = safeReadlink('/proc/self/ns/net');
  for (const mode of candidateModes(options.mode)) {
    for (const uidDrop of root && options.uidDrop ? [true, false] : [false]) {
      const setup: SandboxSetup = { mode, launcher, python, seccomp, uidDrop };
      try {
        const probe = await runProbe(setup, uidDrop ? options.probeUid : null);
        if (mode !== 'none' && probe.netns === hostNetns) throw new Error(`${mode} started but the network namespace is the host's`);
        if (!probe.rootReadable) throw new Error(`the sandbox cannot read ${GATEWAY_ROOT} (it must be world-readable for uid ${options.probeUid})`);
        return { setup, protections: describe(setup, probe, hostNetns, fallbacks) };
      } catch (err) {
        fallbacks.push({ mode, uidDrop, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
  const setup: SandboxSetup = { mode: 'none', launcher: 'none', python: null, seccomp: false, uidDrop: false };
  const protections = describe(setup, null, hostNetns, fallbacks);
  protections.warnings.push('no sandbox setup passed its probe: plugin processes run unconfined');
  return { setup, protections };
}

function describe(setup: SandboxSetup, probe: Probe | null, hostNetns: string, fallbacks: ProcessProtections['fallbacks']): ProcessProtections {
  const warnings: string[] = [];
  const limit = (name: string, unit = 1): number => {
    const value = probe?.limits[name] ?? -1;
    return value < 0 ? -1 : Math.round(value / unit);
  };
  const protections: ProcessProtections = {
    mode: setup.mode,
    bwrap: setup.mode === 'bwrap',
    netns: probe !== null && probe.netns !== hostNetns,
    seccomp: probe !== null && probe.seccomp === '2' && probe.inet === 'EPERM',
    // Under `unshare -r` the process looks like root inside; the host uid is what RLIMIT_NPROC counts.
    uidDrop: setup.uidDrop && probe !== null,
    pidNamespace: setup.mode !== 'none' && probe !== null && probe.pid < 10,
    envScrubbed: true,
    launcher: setup.launcher,
    rlimits: {
      cpuSeconds: limit('cpu time'),
      dataMb: limit('data size', 1024 * 1024),
      fileSizeMb: limit('file size', 1024 * 1024),
      openFiles: limit('open files'),
      // The probe reads the inherited limit too; only one the sandbox sets bounds a fork bomb.
      maxProcesses: processLimitApplies(setup, setup.uidDrop ? 0 : null) ? limit('processes') : -1,
    },
    fallbacks,
    warnings,
  };
  if (!protections.seccomp) warnings.push('no seccomp filter: plugins may open sockets (only a network namespace stops them)');
  if (!protections.netns) warnings.push('plugins share the gateway\'s network namespace');
  if (!protections.uidDrop) warnings.push('plugins run as the gateway\'s uid (calls are not separated from each other by uid)');
  if (protections.rlimits.maxProcesses < 0) warnings.push('RLIMIT_NPROC is not set: a fork bomb is stopped only by the wall-clock kill, and may load the machine until then');
  if (!protections.bwrap) warnings.push('no bubblewrap: plugins see the host file system with their uid\'s permissions, and the disk quota is not enforced');
  return protections;
}

function runProbe(setup: SandboxSetup, uid: number | null): Promise<Probe> {
  const hostCwd = mkdtempSync(join(tmpdir(), 'conveyor-probe-'));
  // Removed however the probe ends: a failed chown, or a spawn that throws, left it behind before.
  return probeIn(setup, uid, hostCwd).finally(() => rmSync(hostCwd, { recursive: true, force: true }));
}

async function probeIn(setup: SandboxSetup, uid: number | null, hostCwd: string): Promise<Probe> {
  chmodSync(hostCwd, 0o700);
  if (uid !== null) chownSync(hostCwd, uid, uid);
  const plan = planProcessLaunch(setup, {
    argv: [process.execPath, '-e', PROBE_SCRIPT, GATEWAY_ROOT],
    readOnlyPaths: [GATEWAY_ROOT, nodePrefix()],
    limits: { ...DEFAULT_PROCESS_LIMITS, maxProcesses: 256 },
    dataMb: DEFAULT_PROCESS_LIMITS.memoryMb + nodeDataHeadroomMb(1), // node -e: one isolate
    cpuSeconds: DEFAULT_PROCESS_LIMITS.cpuSeconds,
    uid,
    hostCwd,
  });
  return new Promise((resolve, reject) => {
    const child = spawn(plan.command, plan.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: plan.env,
      cwd: plan.cwd,
      detached: true,
      ...(plan.uid !== undefined ? { uid: plan.uid, gid: plan.gid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-2000)));
    const timer = setTimeout(() => {
      if (child.pid !== undefined) killProcessTree(child.pid);
    }, 15_000);
    const done = (error: Error | null): void => {
      clearTimeout(timer);
      if (error) return reject(error);
      try {
        resolve(probeSchema.parse(JSON.parse(stdout.trim().split('\n').pop() ?? '')));
      } catch {
        reject(new Error(`probe failed: ${(stderr || stdout).trim().slice(0, 500) || 'no output'}`));
      }
    };
    child.on('error', (err) => done(err));
    child.on('close', () => done(null));
  });
}

function canImportSeccomp(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ['-I', '-c', 'import seccomp'], { timeout: 10_000 }, (error) => resolve(error === null));
  });
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}
