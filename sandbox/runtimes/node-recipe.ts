import { existsSync, lstatSync, readdirSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const PLUGIN_HOST_SCRIPT = join(here, 'plugin-host.ts');

/** file: URL of tsx's loader, so a child can `--import` it whatever its working directory. */
export function tsxLoaderUrl(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
}

/**
 * This Node runs .ts files itself (type stripping: on by default from Node 22.18 and 23.6). A
 * plugin process then starts without tsx: tsx's module-hooks thread and every module loaded
 * through it cost a JS plugin process about 0.25–0.7 s of CPU before its first call. The gateway's
 * own code is erasable TypeScript (tsconfig `erasableSyntaxOnly`); a plugin module that is not
 * falls back to tsx in the plugin process (load-plugin-module.ts).
 */
export function nativeTypeScript(): boolean {
  return Boolean((process.features as { typescript?: string | false }).typescript);
}

export interface PluginHostArgs {
  guest: 'node-vm' | 'isolated-vm' | 'none';
  /** V8 old-generation limit (the process's JS heap). */
  heapMb: number;
  /** Module imported before `ready`, so a warm spare has it loaded. */
  preload?: string;
  /** One process serves many calls (the isolate host). */
  shared?: boolean;
  /** How long a plugin's onLoad may take in it (on-load-limit.ts; 30 s when left out). */
  onLoadLimitMs?: number;
}

/**
 * V8 isolates in a plugin process: its main thread and tsx's module-hooks thread (on Node 20, or
 * once a plugin module needs tsx).
 */
export const PLUGIN_HOST_ISOLATES = 2;

/**
 * CPU seconds a plugin process may spend before its first call. On Node 20: Node, tsx's hooks
 * thread (≈0.3 s) and every module of the host, the kit, zod and the plugin loaded through those
 * hooks (a warm tsx cache barely changes it), measured at 0.9–1.0 s on the 2-core CI machine in a
 * quiet hour and 2.3–2.5 s in a slow one (the same host, its CPU about 3× slower). With native
 * type stripping (Node 22/24) about 0.2 s, unless the plugin module needs tsx.
 * RLIMIT_CPU gets this much on top of the plugin's own cpuSeconds, which would otherwise be spent
 * before the plugin ran at all; and a reusable plugin's process is kept for its next call only
 * while it has used no more than this (idle-processes.ts). At 2 s a slow hour's start-up used it
 * all: no process was ever kept, and every call paid a new one's 2.3 s of CPU. The call's
 * wall-clock limit still bounds what the larger allowance lets a hook spin.
 */
export const PLUGIN_HOST_STARTUP_CPU_S = 5;

/** argv of a JS plugin process: node + plugin-host.ts, through tsx where Node cannot strip types. */
export function pluginHostArgv(args: PluginHostArgs): string[] {
  return [
    process.execPath,
    // isolated-vm on Node >= 20 crashes with the shared-heap startup snapshot (isolated-vm#420).
    ...(args.guest === 'isolated-vm' ? ['--no-node-snapshot'] : []),
    `--max-old-space-size=${args.heapMb}`,
    // The flag is a no-op where stripping is on by default, and makes the child match a parent
    // that turned it on by flag (Node 22.6–22.17).
    ...(nativeTypeScript() ? ['--experimental-strip-types'] : ['--import', tsxLoaderUrl()]),
    PLUGIN_HOST_SCRIPT,
    `--guest=${args.guest}`,
    ...(args.shared ? ['--shared'] : []),
    ...(args.preload ? [`--preload=${args.preload}`] : []),
    ...(args.onLoadLimitMs !== undefined ? [`--onload-limit-ms=${args.onLoadLimitMs}`] : []),
  ];
}

/** The nearest directory at or above a file: URL that holds a package.json (what a sandbox must see to import it). */
export function packageRootOf(moduleUrl: string): string | null {
  if (!moduleUrl.startsWith('file:')) return null;
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * Host paths a JS plugin process must read: the gateway's package (plugin-host.ts, the kit,
 * node_modules), Node's install prefix, the plugin's own package (its folder, for a module in no
 * package) and the packages it resolves from outside that folder, and any extra grants. Sorted
 * and deduplicated, so equal grants give equal keys (and share an isolate host).
 */
export function sandboxReadPaths(gatewayRoot: string, moduleUrl?: string, extra: readonly string[] = []): string[] {
  const root = moduleUrl?.startsWith('file:') ? (packageRootOf(moduleUrl) ?? dirname(fileURLToPath(moduleUrl))) : null;
  const prefix = dirname(dirname(process.execPath));
  const granted = [gatewayRoot, prefix, ...(root ? [root] : []), ...extra];
  return [...new Set([...granted, ...(root ? outsideDependencies(root, granted) : [])])].sort();
}

/**
 * Where the plugin's imports resolve to outside the folders already granted: Node looks for a
 * package in every `node_modules` from the module's folder up (a workspace's hoisted install),
 * and follows symlinks (`npm link`, a node_modules shared between projects) to their targets.
 * The gateway sees those files; a sandbox that bound only the plugin's folder did not, and every
 * call failed with "Cannot find package 'zod'" after a start-up that had loaded the module fine.
 *
 * What a link may widen the sandbox to is bounded, since a link can point anywhere (`evil -> /`):
 * a `node_modules` is granted only if it is one (by name), a linked package only if it is one
 * (it has a package.json), and never a folder holding the gateway, the plugin or the home folder.
 * A `node_modules` under a sticky, world-writable folder (`/tmp/node_modules`) is anyone's to
 * plant, so it is not looked at.
 */
function outsideDependencies(root: string, granted: readonly string[]): string[] {
  const found: string[] = [];
  const inside = (path: string, folder: string) => path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
  const guarded = [root, ...granted, ...(process.env['HOME'] ? [process.env['HOME']] : [])];
  const add = (path: string) => {
    if ([...granted, ...found].some((g) => inside(path, g))) return;
    if (guarded.some((g) => inside(g, path))) return;
    found.push(path);
  };
  for (let dir = root; ; dir = dirname(dir)) {
    const modules = realOrNull(join(dir, 'node_modules'));
    if (modules !== null && basename(modules) === 'node_modules' && !isShared(dir)) {
      add(modules);
      for (const link of symlinkedPackages(modules)) if (existsSync(join(link, 'package.json'))) add(link);
    }
    if (dirname(dir) === dir) return found;
  }
}

/** Sticky and writable by everyone, as /tmp: what is in it may be anyone's. */
function isShared(dir: string): boolean {
  try {
    const mode = lstatSync(dir).mode;
    return (mode & 0o1000) !== 0 && (mode & 0o002) !== 0;
  } catch {
    return true;
  }
}

/** The targets of the packages in `modules` (and in its @scope folders) that are symlinks. */
function symlinkedPackages(modules: string): string[] {
  const targets: string[] = [];
  const visit = (folder: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(folder, name);
      if (depth === 0 && name.startsWith('@')) visit(path, 1);
      else if (isSymlink(path)) {
        const real = realOrNull(path);
        if (real !== null) targets.push(real);
      }
    }
  };
  visit(modules, 0);
  return targets;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
