import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallClock } from '../../../sandbox/runtimes/call-clock.ts';

describe('CallClock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts hook work and not the waits between it while the call is written, then everything after its end', () => {
    const expire = vi.fn();
    const clock = new CallClock(100, expire);
    const first = clock.work();
    vi.advanceTimersByTime(30);
    first();
    vi.advanceTimersByTime(10_000); // the model writing slowly
    const second = clock.work();
    vi.advanceTimersByTime(30);
    second();
    clock.finalStretch();
    vi.advanceTimersByTime(39);
    expect(expire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(expire).toHaveBeenCalledOnce();
  });

  it('stops a hook that hangs while the call is still being written', () => {
    const expire = vi.fn();
    const clock = new CallClock(100, expire);
    clock.work();
    vi.advanceTimersByTime(100);
    expect(expire).toHaveBeenCalledOnce();
  });

  it('counts overlapping work once and never fires once stopped', () => {
    const expire = vi.fn();
    const clock = new CallClock(100, expire);
    const a = clock.work();
    const b = clock.work();
    vi.advanceTimersByTime(50);
    a();
    vi.advanceTimersByTime(20);
    b();
    a(); // a second call of the same end is ignored
    clock.finalStretch(); // 70 used: 30 left
    vi.advanceTimersByTime(29);
    clock.stop();
    vi.advanceTimersByTime(1_000);
    expect(expire).not.toHaveBeenCalled();
  });
});
