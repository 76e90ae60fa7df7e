/**
 * Entry point of a JS plugin process (runtime `process`, and the shared isolate host). Started by
 * the gateway as `node [--no-node-snapshot] (--experimental-strip-types | --import <tsx>)
 * plugin-host.ts --guest=<engine> [--shared] [--preload=<module url>]` (node-recipe.ts), inside
 * the sandbox built by process-launch.ts. Speaks the plugin protocol (plugin-protocol.ts) on fd 3.
 *
 * Per-call state (the hook context, ctx.state) lives here, keyed by callId, from `start` until
 * the `result` is sent or the call is aborted.
 */
import { readdirSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { progressOf, verdictOf } from '../../plugins/kit/check-hook-output.ts';
import type { GuestJs } from '../../plugins/kit/guest-js.ts';
import type { PluginContext, PluginDefinition } from '../../plugins/kit/define-plugin.ts';
import type { ToolProgress, ToolResult } from '../../plugins/plugin-types.ts';
import { NdjsonLineSplitter } from '../python-ipc.ts';
import { createIsolatedVmGuest, loadIsolatedVm } from './isolated-vm-guest.ts';
import { hookThrowOf, type HookName, type HookThrow } from './hook-throw.ts';
import { hookFailure, loadPluginForCalls, runEndHook } from './load-plugin-module.ts';
import { createNodeVmGuest } from './node-vm-guest.ts';
import { ON_LOAD_LIMIT_MS } from './on-load-limit.ts';
import { checkPluginName } from './plugin-name-mismatch.ts';
import type { ChildMessage, HostMessage } from './plugin-protocol.ts';

interface Call {
  plugin: string;
  ctx: PluginContext;
  controller: AbortController;
  definition: Promise<PluginDefinition>;
  /** Hooks of one call run one after another, in the order the gateway sent them. */
  chain: Promise<unknown>;
  failure: string | null;
  /**
   * Set while onEnd runs: a malformed ctx.emit then becomes the call's result once onEnd returns,
   * as in the thread runtime, rather than an abort (and onAbort) while onEnd may be committing.
   */
  endEmitError?: string | null;
}

const flags = new Map(process.argv.slice(2).map((arg) => {
  const [key, ...rest] = arg.replace(/^--/, '').split('=');
  return [key as string, rest.join('=')];
}));
const requestedGuest = flags.get('guest') ?? 'node-vm';
const onLoadLimitMs = Number(flags.get('onload-limit-ms')) || ON_LOAD_LIMIT_MS;
const DEFAULT_GUEST_MEMORY_MB = 64;

/**
 * The process's own writable directories (process-launch.ts points HOME and TMPDIR at them in
 * every mode), read before any plugin code runs: a plugin that changed its environment must not
 * point the clean-up elsewhere.
 */
const scratchDirs = [...new Set([process.env.HOME, process.env.TMPDIR].filter((d): d is string => d !== undefined && d !== '' && d !== '/'))];
/**
 * What the scratch directories held when the first call started (tsx's cache, files an onLoad
 * wrote): a reused process starts each later call with only these.
 */
let scratchAtStart: Set<string> | undefined;

// Node writes to a pipe asynchronously: what a plugin prints past the pipe's 64 KiB waits in this
// process, reaches the gateway after the call's result, and counts against the next call of a kept
// process (reuseProcess) while the call that printed it is never stopped at the output limit.
// Blocking, a print returns once its bytes are in the pipe, and the gateway counts them meanwhile.
for (const stream of [process.stdout, process.stderr]) {
  (stream as { _handle?: { setBlocking?: (blocking: boolean) => unknown } })._handle?.setBlocking?.(true);
}

/**
 * Resolves once what was printed so far is in the pipes, for a `ready` or `result` to follow it:
 * setBlocking is no public API, and a pipe it left asynchronous would charge the output to the
 * next call again. A stream the plugin ended or broke has nothing more to deliver.
 */
function outputFlushed(): Promise<void> {
  const pending = [process.stdout, process.stderr].filter((stream) => stream.writableLength > 0 && !stream.writableEnded && !stream.destroyed);
  return Promise.all(pending.map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve())))).then(() => undefined);
}

const channel = new Socket({ fd: 3, readable: true, writable: true });
const splitter = new NdjsonLineSplitter();
const calls = new Map<string, Call>();
let makeGuest: (memoryMb: number) => GuestJs | undefined = () => undefined;

/** `plugin`: whose result this is, for the error that replaces one that cannot be sent. */
function send(message: ChildMessage, plugin = 'the plugin'): void {
  if (channel.destroyed) return;
  let line: string;
  try {
    line = JSON.stringify(message);
  } catch (err) {
    // A result whose data is no JSON (toolResultOf refuses the common ones; a toJSON that makes a
    // BigInt slips by): uncaught here, it ended the process, and the call read "exited with code 1".
    const unsent = unsendable(message, err, plugin);
    if (unsent === undefined) return;
    line = JSON.stringify(unsent);
  }
  channel.write(`${line}\n`);
}

/** What to send instead of a message JSON.stringify threw on: its call's error, or nothing (said on stderr, which the gateway logs). */
function unsendable(message: ChildMessage, err: unknown, plugin: string): ChildMessage | undefined {
  const why = err instanceof Error ? err.message : String(err);
  if (message.t === 'result') {
    const { cpuMs } = message;
    return { t: 'result', callId: message.callId, ok: false, content: `error: ${plugin}'s onEnd returned data that is not JSON (${why})`, ...(cpuMs !== undefined ? { cpuMs } : {}) };
  }
  process.stderr.write(`a ${message.t} message cannot be sent as JSON (${why}); dropped\n`);
  return undefined;
}

async function main(): Promise<void> {
  let guest: 'isolated-vm' | 'node-vm' | 'none' = 'none';
  let guestError: string | undefined;
  if (requestedGuest === 'isolated-vm') {
    try {
      const { ivm } = await loadIsolatedVm();
      makeGuest = (memoryMb) => createIsolatedVmGuest(ivm, memoryMb);
      guest = 'isolated-vm';
    } catch (err) {
      guestError = err instanceof Error ? err.message : String(err);
    }
  } else if (requestedGuest === 'node-vm') {
    const nodeVm = createNodeVmGuest();
    makeGuest = () => nodeVm;
    guest = 'node-vm';
  }
  if (flags.has('shared')) {
    // One host serves many calls: a stray throw from one plugin's timer must not end the others.
    process.on('uncaughtException', (err) => process.stderr.write(`uncaught: ${err.stack ?? String(err)}\n`));
    process.on('unhandledRejection', (err) => process.stderr.write(`unhandled rejection: ${String(err)}\n`));
  }
  const preload = flags.get('preload');
  // Bounded (onLoadLimitMs): an onLoad that hangs still lets the process say `ready`, and its call
  // then fails with the onLoad error, not the gateway's "found no process" a while later.
  if (preload) await loadPluginForCalls(preload, onLoadLimitMs).catch(() => undefined);
  channel.setEncoding('utf8');
  channel.on('data', (chunk: string) => {
    for (const line of splitter.push(chunk)) if (line.trim()) receive(JSON.parse(line) as HostMessage);
  });
  // The gateway closed the channel (or died): nothing is left to serve.
  channel.on('close', () => process.exit(0));
  channel.on('error', () => process.exit(0));
  await outputFlushed();
  send({ t: 'ready', pid: process.pid, guest, ...(guestError ? { guestError } : {}) });
}

function receive(message: HostMessage): void {
  switch (message.t) {
    case 'load':
      loadPluginForCalls(message.module, onLoadLimitMs).then(
        (definition) => send({ t: 'loaded', module: message.module, plugin: definition.name }),
        (err: unknown) => send({ t: 'loaded', module: message.module, error: String(err) }),
      );
      return;
    case 'start':
      return startCall(message);
    case 'piece': {
      const call = calls.get(message.callId);
      if (!call) return send({ t: 'verdict', callId: message.callId, seq: message.seq });
      call.chain = call.chain.then(async () => {
        let reject: string | undefined;
        if (call.failure === null) {
          try {
            const definition = await call.definition;
            const checked = verdictOf(call.plugin, await definition.hooks.onPiece?.(message.piece, call.ctx));
            if ('error' in checked) failCall(message.callId, call, { ok: false, content: checked.error });
            else if (checked.verdict) reject = checked.verdict.reason;
          } catch (err) {
            failCall(message.callId, call, hookFailure(call.plugin, err), hookThrowOf('onPiece', err));
          }
        }
        send({ t: 'verdict', callId: message.callId, seq: message.seq, ...(reject !== undefined ? { reject } : {}) });
      });
      return;
    }
    case 'end': {
      const call = calls.get(message.callId);
      if (!call) return send({ t: 'result', callId: message.callId, ok: false, content: 'error: unknown call' });
      call.chain = call.chain.then(async () => {
        const definition = await call.definition.catch(() => null);
        let thrown: HookThrow | undefined;
        call.endEmitError = null;
        const result =
          call.failure !== null || definition === null
            ? { ok: false, content: call.failure ?? 'error: the plugin module did not load' }
            : await runEndHook(definition, message.args, call.ctx, {
                onThrow: (t) => (thrown = t),
                // `failed` now, as a hook's throw: the gateway ends the call and its `abort` brings onAbort.
                onParseThrow: (failure) => failCall(message.callId, call, failure),
              });
        // Aborted while onEnd ran (a time limit, the request gone): onAbort has run, and the gateway
        // takes this call's `aborted` as its end, so a result now would end it a second way.
        if (call.controller.signal.aborted) return;
        // A failed call stays until its `abort`, which the gateway sends on `failed`: its onAbort
        // must still run, and an `end` sent before `failed` reached the gateway comes first.
        if (call.failure === null) calls.delete(message.callId);
        // The call's output first: the gateway charges what it reads after the result to the next call.
        await outputFlushed();
        const { user, system } = process.cpuUsage();
        // A malformed ctx.emit in onEnd: that error is the call's, now that onEnd has returned.
        const failure = call.failure ?? call.endEmitError;
        const outcome = failure ? { ok: false, content: failure } : result;
        send({ t: 'result', callId: message.callId, ...outcome, cpuMs: (user + system) / 1000, ...(thrown ? { thrown } : {}) }, call.plugin);
      });
      return;
    }
    case 'abort': {
      const call = calls.get(message.callId);
      if (!call) return send({ t: 'aborted', callId: message.callId });
      calls.delete(message.callId);
      // Not chained after the call's hooks: the one still running may be why the call timed out.
      call.controller.abort(message.reason);
      // The ack tells the gateway it may kill the process now: it waits for it (ON_ABORT_GRACE_MS
      // at most), so onAbort runs before the kill, a promise it returns included.
      void call.definition
        .then((d) => d.hooks.onAbort?.(message.reason, call.ctx))
        .catch(() => undefined)
        .then(() => send({ t: 'aborted', callId: message.callId }));
      return;
    }
  }
}

function startCall(message: Extract<HostMessage, { t: 'start' }>): void {
  // A reused process (reuseProcess): what the last call wrote does not reach this one, nor add up
  // against the directories' size limit. A shared host serves calls at once, and has no such files.
  if (!flags.has('shared')) {
    if (scratchAtStart === undefined) scratchAtStart = new Set(scratchEntries());
    else resetScratchDirs(scratchAtStart);
  }
  const controller = new AbortController();
  const definition = message.module
    ? loadPluginForCalls(message.module, onLoadLimitMs)
    : Promise.reject(new Error('no plugin module given'));
  const guest = makeGuest(message.memoryMb ?? DEFAULT_GUEST_MEMORY_MB);
  const ctx: PluginContext = {
    callId: message.toolCallId,
    signal: controller.signal,
    state: {},
    // Checked here, as in every runtime: a malformed event fails the call naming the field, where
    // the gateway's own check of the wire line killed the process with the raw line.
    emit: (progress: ToolProgress) => {
      const checked = progressOf(message.plugin, progress);
      if ('progress' in checked) send({ t: 'progress', callId: message.callId, progress: checked.progress });
      else if (call.endEmitError !== undefined) call.endEmitError ??= checked.error;
      else if (calls.get(message.callId) === call) failCall(message.callId, call, { ok: false, content: checked.error });
    },
    ...(guest ? { guest } : {}),
  };
  const call: Call = { plugin: message.plugin, ctx, controller, definition, chain: Promise.resolve(), failure: null };
  let running: HookName | undefined;
  call.chain = definition.then(
    async (d) => {
      checkPluginName(d.name, message.plugin);
      running = 'onStart';
      await d.hooks.onStart?.(ctx);
    },
  ).catch((err: unknown) => {
    failCall(message.callId, call, hookFailure(message.plugin, err), hookThrowOf(running, err));
  });
  calls.set(message.callId, call);
}

/**
 * A hook failed the call: later hooks are skipped, `end` answers with this error, and the gateway,
 * told now, ends the call at once (its `abort` brings onAbort), as the inline runtime does. A
 * failure with a code (onLoad past its limit, a module of another plugin) passes it on, and a
 * throw its stack. The first failure is the call's, as in the other runtimes.
 */
function failCall(callId: string, call: Call, failure: ToolResult, thrown?: HookThrow): void {
  if (call.failure !== null) return;
  call.failure = failure.content;
  const code = failure.data?.['code'];
  send({ t: 'failed', callId, content: failure.content, ...(code === 'sandbox_limit_exceeded' || code === 'sandbox_error' ? { code } : {}), ...(thrown ? { thrown } : {}) });
}

function scratchEntries(): string[] {
  return scratchDirs.flatMap((dir) => {
    try {
      return readdirSync(dir).map((name) => join(dir, name));
    } catch {
      return [];
    }
  });
}

/** Removes every entry of the scratch directories that `kept` does not name. */
function resetScratchDirs(kept: ReadonlySet<string>): void {
  for (const path of scratchEntries()) {
    if (kept.has(path)) continue;
    try {
      // rm -r does not follow a symlink: a link the plugin planted goes, not what it points to.
      rmSync(path, { recursive: true, force: true });
    } catch {
      // One the plugin made unremovable (a busy file): the call still runs.
    }
  }
}

void main();
