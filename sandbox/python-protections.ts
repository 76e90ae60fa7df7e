import { readlinkSync } from 'node:fs';
import type { ReadyMessage } from './python-ipc.ts';
import type { SandboxMode } from './python-launch.ts';
import type { PythonSandboxLimits } from './python-sandbox-options.ts';

/**
 * What actually protects the host from a Python cell, as measured when the zygote started (a
 * probe cell ran with the full setup and reported from inside). The gateway shows this in
 * GET /health.
 */
export interface SandboxProtections {
  mode: SandboxMode;
  python: { executable: string; version: string };
  /** The zygote runs inside bubblewrap (own mount, PID, IPC, UTS, network and user namespaces). */
  bwrap: boolean;
  /** A cell's network namespace differs from the gateway's: no route to the host's services. */
  netns: boolean;
  /**
   * Each cell runs in its own user, PID, IPC and mount namespaces, with its own /proc, /tmp and
   * /dev/shm and no capabilities: it cannot signal another cell, see it in /proc, or open files in
   * its working directory. Measured by the probe cell; bwrap only.
   */
  cellNamespaces: boolean;
  /** The seccomp filter is loaded in cells and socket(AF_INET) fails with EPERM. */
  seccomp: boolean;
  /**
   * Cells run as a host uid that is neither root nor the gateway's (nobody): they cannot read the
   * gateway's files or /proc entries, and cannot signal it.
   */
  uidDrop: boolean;
  /** The cell's uid inside its namespace, and as the host sees it. */
  cellUid: number;
  hostUid: number;
  /** RLIMIT_NPROC bites (it does not for host root). */
  processLimitEnforced: boolean;
  /** Limits the kernel enforces per cell (values as configured). */
  rlimits: {
    cpuSeconds: number;
    memoryMb: number;
    fileSizeMb: number;
    maxProcesses: number;
    openFiles: number;
    coreDumps: false;
  } | null;
  /** Enforced by the gateway: busy time per cell, then SIGKILL of the cell's processes. */
  wallClockMs: number;
  /** Enforced by the zygote (exact) and the gateway (backstop), then SIGKILL. */
  outputBytes: number;
  preImports: { loaded: string[]; failed: Array<{ name: string; error: string }> };
  /** Stronger modes that were tried and failed, and why. */
  fallbacks: Array<{ mode: SandboxMode; error: string }>;
  warnings: string[];
}

export function describeProtections(
  mode: SandboxMode,
  ready: ReadyMessage,
  limits: PythonSandboxLimits,
  openFiles: number,
  fallbacks: Array<{ mode: SandboxMode; error: string }>,
  zygoteHostUid: number | null,
): SandboxProtections {
  const probe = ready.probe;
  const warnings: string[] = [];
  let hostNetns: string | null = null;
  try {
    hostNetns = readlinkSync('/proc/self/ns/net');
  } catch {
    warnings.push('cannot read /proc/self/ns/net; network isolation unknown');
  }
  if (!probe) warnings.push('the probe cell failed; per-cell limits and seccomp are unverified');
  if (probe && !probe.stdlibReadable) {
    warnings.push(`cells (uid ${probe.uid}) cannot read the interpreter's standard library; imports not pre-loaded will fail`);
  }
  if (probe && !ready.cellNamespaces) {
    warnings.push(
      `cells share one PID namespace and ${mode === 'bwrap' ? '/tmp' : "the host's temporary directory"}: a cell can signal another cell and see it in /proc` +
        `${mode === 'bwrap' ? ', and open files in its working directory' : ''}` +
        (ready.cellNamespacesNote ? ` (per-cell namespaces failed: ${ready.cellNamespacesNote})` : mode === 'bwrap' ? '' : ' (per-cell namespaces are used under bwrap only)'),
    );
  }
  if (!ready.seccompAvailable) warnings.push(`python3-seccomp is not importable: no syscall filter${ready.seccompError ? ` (${ready.seccompError})` : ''}`);
  const gatewayUid = typeof process.getuid === 'function' ? process.getuid() : -1;
  // A cell that kept the zygote's uid has the zygote's host uid (bwrap's user namespaces map
  // it); one that dropped to nobody did so in the zygote's namespace, which is then the host's.
  const hostUid = probe === null ? -1 : probe.uid === ready.euid ? (zygoteHostUid ?? -1) : probe.uid;
  const uidDrop = probe !== null && hostUid !== 0 && hostUid !== gatewayUid;
  if (probe !== null && hostUid === 0) {
    warnings.push(`cells run as root${ready.uidNote ? ` (${ready.uidNote})` : ''}: RLIMIT_NPROC and file permissions do not apply`);
  } else if (probe !== null && !uidDrop && mode !== 'bwrap') {
    warnings.push("cells run as the gateway's own uid without a PID namespace: they can read its /proc entries");
  }
  return {
    mode,
    python: { executable: ready.executable, version: ready.python },
    bwrap: mode === 'bwrap',
    netns: probe !== null && hostNetns !== null && probe.netns !== hostNetns,
    cellNamespaces: probe !== null && ready.cellNamespaces,
    seccomp: probe !== null && probe.seccomp && probe.inetDenied,
    uidDrop,
    cellUid: probe?.uid ?? -1,
    hostUid,
    processLimitEnforced: probe !== null && hostUid !== 0,
    rlimits: probe
      ? {
          cpuSeconds: limits.cpuSeconds,
          memoryMb: limits.memoryMb,
          fileSizeMb: limits.fileSizeMb,
          maxProcesses: limits.maxProcesses,
          openFiles,
          coreDumps: false,
        }
      : null,
    wallClockMs: limits.wallClockMs,
    outputBytes: limits.outputBytes,
    preImports: ready.preImports,
    fallbacks,
    warnings,
  };
}
