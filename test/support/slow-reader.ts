import { spawn } from 'node:child_process';
import type { TimingProfile } from '../../sim/sim-server.ts';
import { E2E_PROFILE } from './e2e-profile.ts';
import { parseResponses, type RawResponse } from './raw-http.ts';

/**
 * A served model name of 3,000 characters (vLLM serves any --served-model-name). Every chunk
 * repeats it, ~3 KiB each, so a thousand tokens or so fill the socket buffers that Linux grows on
 * loopback (megabytes), and a test does not wait on ten thousand decode steps.
 */
export const LONG_MODEL_NAME = `sim-${'x'.repeat(3000)}`;

/** Decode far faster than a slow reader reads (the timers' 1 ms a step): the engine finishes while it reads nothing. */
export const FAST_DECODE_PROFILE: TimingProfile = { ...E2E_PROFILE, name: 'fast-decode', description: 'slow-reader tests', decode: { baseMs: 0.05, perSeqMs: 0 } };

// A client with a small receive window (Node cannot set SO_RCVBUF; Python can, before connect):
// it reads the response head and passes it on, then reads nothing more until told to on stdin.
const SLOW_READER = String.raw`
import socket, sys
port, path, body = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(('127.0.0.1', port))
s.sendall(b'POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n' % (path.encode(), len(body)) + body)
head = b''
while b'\r\n\r\n' not in head:
    head += s.recv(1)
sys.stdout.buffer.write(head); sys.stdout.flush()
sys.stdin.readline()
parts = []
while True:
    try:
        got = s.recv(65536)
    except ConnectionResetError:
        break
    if not got: break
    parts.append(got)
sys.stdout.buffer.write(b''.join(parts))
`;

export interface SlowReader {
  /** The response's status line and headers (lower-cased names, as `head.toLowerCase()` finds them). */
  head: string;
  /** Reads everything else until the server closes; resolves with the whole response, its chunked body decoded. */
  readRest(): Promise<RawResponse>;
  /** Reads everything else until the server closes or resets the connection; the bytes as they came. */
  readRaw(): Promise<Buffer>;
  kill(): void;
}

/**
 * POSTs `body` to `url`'s `path` and stops reading once the response head has come: the server's
 * socket to it fills after a few kilobytes (plus what Linux buffers on the sending side).
 */
export async function startSlowReader(url: string, path: string, body: unknown): Promise<SlowReader> {
  const child = spawn('python3', ['-c', SLOW_READER, new URL(url).port, path, JSON.stringify(body)]);
  const out: Buffer[] = [];
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const head = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      out.push(b);
      const text = Buffer.concat(out).toString('latin1');
      if (text.includes('\r\n\r\n')) resolve(text);
    });
    child.on('error', reject);
    void closed.then((code) => reject(new Error(`the slow reader exited (${code}) before the response head`)));
  });
  const readRaw = async (): Promise<Buffer> => {
    child.stdin.write('go\n');
    const code = await closed;
    if (code !== 0) throw new Error(`the slow reader exited with ${code}`);
    return Buffer.concat(out);
  };
  return {
    head,
    readRaw,
    readRest: async () => parseResponses(await readRaw(), 1)[0]!,
    kill: () => child.kill(),
  };
}
