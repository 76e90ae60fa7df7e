import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { BoundedQueue } from '../../core/bounded-queue.ts';
import { ClientAbortedError } from '../../core/errors.ts';
import { admitted } from '../../gateway/request-admission.ts';

const busy = () => new Error('busy');
/** The part of a ServerResponse admitted() reads: its 'close' event and whether it came. */
const response = (closed: boolean) => Object.assign(new EventEmitter(), { closed }) as unknown as ServerResponse;

describe('a place among maxConcurrentRequests', () => {
  // A client that left while the route looked up an adapter's base model had had its 'close'
  // already: it waited in line, and took the next free place, for no one.
  it('is not waited for, nor taken, by a client already gone', async () => {
    const queue = new BoundedQueue(1, 4, busy);
    const holder = queue.tryAcquire()!;
    const waiting = admitted(queue, response(true)).then(
      (release) => ({ release }),
      (err: unknown) => ({ err }),
    );
    holder();
    expect(await waiting).toEqual({ err: expect.any(ClientAbortedError) });
    expect(queue.tryAcquire()).toBeTypeOf('function');
  });

  it('is given to a client still there once one is free', async () => {
    const queue = new BoundedQueue(1, 4, busy);
    const holder = queue.tryAcquire()!;
    const waiting = admitted(queue, response(false));
    holder();
    expect(await waiting).toBeTypeOf('function');
  });
});
