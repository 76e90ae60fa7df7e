import { createRequire } from 'node:module';
import { versionAtLeast } from './isolated-vm-guest.ts';

export interface IsolatedVmSupport {
  available: boolean;
  version?: string;
  /** Why isolates cannot run here. */
  reason?: string;
}

/**
 * Cheap checks before any isolate host is started: Node >= 22 (isolated-vm 6.2.0's engines), the
 * optional package installed, and not a release affected by GHSA-864f-rcv7-6rh4. Whether the
 * native module really loads is known once a host says `ready`.
 */
export function checkIsolatedVm(): IsolatedVmSupport {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) {
    return { available: false, reason: `isolated-vm >= 6.2.0 needs Node >= 22; this is Node ${process.versions.node}` };
  }
  let version: string;
  try {
    version = (createRequire(import.meta.url)('isolated-vm/package.json') as { version: string }).version;
  } catch {
    return { available: false, reason: 'isolated-vm is not installed (optional dependency: npm i -O isolated-vm@^6.2.0)' };
  }
  if (!versionAtLeast(version, [6, 2, 0])) {
    return { available: false, version, reason: `isolated-vm ${version} is affected by GHSA-864f-rcv7-6rh4; 6.2.0 or later is required` };
  }
  return { available: true, version };
}
