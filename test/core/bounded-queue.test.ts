import { describe, expect, it } from 'vitest';
import { SandboxQueueFullError } from '../../core/errors.ts';
import { BoundedQueue } from '../../core/bounded-queue.ts';

describe('BoundedQueue', () => {
  it('grants in FIFO order, refuses beyond the queue, and drops a waiter whose signal aborts', async () => {
    const queue = new BoundedQueue(1, 2, SandboxQueueFullError.refusal('process'));
    const order: string[] = [];
    const first = await queue.acquire();
    const controller = new AbortController();
    const second = queue.acquire().then((release) => (order.push('second'), release));
    const gone = queue.acquire(controller.signal).catch((err: unknown) => (order.push('gone'), err));
    await expect(queue.acquire()).rejects.toBeInstanceOf(SandboxQueueFullError);
    controller.abort(new Error('client left'));
    expect(((await gone) as Error).message).toBe('client left');
    const third = queue.acquire().then((release) => (order.push('third'), release));
    first();
    (await second)();
    (await third)();
    expect(order).toEqual(['gone', 'second', 'third']);
    expect(queue.active).toBe(0);
  });

  it('tryAcquire takes a free slot at once and takes nothing when none is free', async () => {
    const queue = new BoundedQueue(1, 1, SandboxQueueFullError.refusal('python'));
    const release = queue.tryAcquire();
    expect(release).toBeTypeOf('function');
    expect(queue.tryAcquire()).toBeUndefined();
    const waiter = queue.acquire();
    expect(queue.waiting).toBe(1);
    release!();
    // The slot went to the waiter, not back to the pool.
    expect(queue.tryAcquire()).toBeUndefined();
    (await waiter)();
    expect(queue.active).toBe(0);
  });
});
