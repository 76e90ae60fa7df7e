import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntimePools, defineCommandPlugin, runScriptedCall, toolFromPlugin } from '../../../plugins/kit/index.ts';

// Two command plugins that run the same program with the same limits, each granted its own folder
// (readOnlyPaths: `--tool-read-path`, a config entry's readOnlyPaths): the process pool keyed their
// warm spares by the command and limits alone, so the second tool's call was handed the spare
// started for the first, with the first's read-only folders and name. Its file was not there
// (ENOENT), and the first tool's folder was open to it.
const pools = createRuntimePools({ process: { uidBase: 1_900_995_000 } });
const dir = mkdtempSync(join(tmpdir(), 'command-spare-'));
afterAll(async () => {
  await pools.close();
  rmSync(dir, { recursive: true, force: true });
});
// Readable by the sandbox's own uid (the gateway as root runs each plugin process under its own).
chmodSync(dir, 0o755);
// In a folder of its own: the script's folder is granted to its process, and must not hold a or b.
mkdirSync(join(dir, 'bin'), { mode: 0o755 });
const script = join(dir, 'bin', 'read_file.py');
writeFileSync(script, `import json, os, socket
channel = socket.socket(fileno=3)
def send(m): channel.sendall((json.dumps(m) + '\\n').encode())
send({'t': 'ready', 'pid': os.getpid(), 'guest': 'none'})
for line in channel.makefile('r', encoding='utf-8'):
    msg = json.loads(line)
    if msg['t'] == 'end':
        try:
            with open(msg['args']['path']) as f: send({'t': 'result', 'callId': msg['callId'], 'ok': True, 'content': f.read()})
        except OSError as e:
            send({'t': 'result', 'callId': msg['callId'], 'ok': False, 'content': type(e).__name__})
    elif msg['t'] == 'abort':
        send({'t': 'aborted', 'callId': msg['callId']})
`);
const folder = (name: string): string => {
  const path = join(dir, name);
  mkdirSync(path, { mode: 0o755 });
  writeFileSync(join(path, 'note.txt'), `in ${name}`);
  chmodSync(join(path, 'note.txt'), 0o644);
  return path;
};
const a = folder('a');
const b = folder('b');
const reader = (name: string, readOnlyPaths: string[]) => toolFromPlugin(defineCommandPlugin({
  name, description: 'Reads a file it was granted', parameters: z.object({ path: z.string() }), consumes: 'call',
  limits: { timeoutMs: 10_000 }, command: ['/usr/bin/python3', script],
}), { pools, readOnlyPaths });

it("gives each command plugin processes started with its own read-only folders, never another's spare", async () => {
  const readA = reader('read_a', [a]);
  const readB = reader('read_b', [b]);
  expect((await runScriptedCall(readA, { args: { path: join(a, 'note.txt') } })).result).toMatchObject({ ok: true, content: 'in a' });
  // readA's call left a spare warming for its recipe; readB's call must not get it.
  expect((await runScriptedCall(readB, { args: { path: join(b, 'note.txt') } })).result).toMatchObject({ ok: true, content: 'in b' });
  expect((await runScriptedCall(readB, { args: { path: join(a, 'note.txt') } })).result).toMatchObject({ ok: false, content: 'FileNotFoundError' });
}, 60_000);
