import { describe, expect, it } from 'vitest';
import { SandboxQueueFullError } from '../../../core/errors.ts';
import { BoundedQueue } from '../../../sandbox/runtimes/bounded-queue.ts';

describe('BoundedQueue', () => {
  it('grants in FIFO order, refuses beyond the queue, and drops a waiter whose signal aborts', async () => {
    const queue = new BoundedQueue('process', 1, 2);
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
});
