import { describe, expect, it } from 'vitest';
import { UpstreamReplicas, type Replica } from '../../llm-client/upstream-replicas.ts';

const URLS = ['http://a/v1', 'http://b/v1', 'http://c/v1'];

function setUp(urls = URLS) {
  const clock = { now: 0 };
  const set = new UpstreamReplicas(urls, { restMs: 100, maxRestMs: 350, now: () => clock.now });
  const byUrl = (url: string) => set.replicas.find((r) => r.baseUrl === url)!;
  return { set, clock, byUrl };
}

const none = new Set<Replica>();

describe('UpstreamReplicas: which replica takes the next stream', () => {
  it('spreads new conversations over the replicas, least in flight first', () => {
    const { set, byUrl } = setUp();
    const picked = [0, 1, 2].map(() => {
      const r = set.pick(undefined, none)!;
      r.inFlight += 1;
      return r.baseUrl;
    });
    expect(new Set(picked).size).toBe(3);

    byUrl('http://a/v1').inFlight = 5;
    byUrl('http://b/v1').inFlight = 1;
    byUrl('http://c/v1').inFlight = 3;
    for (let i = 0; i < 4; i++) expect(set.pick(undefined, none)!.baseUrl).toBe('http://b/v1');
  });

  it('rotates among replicas equally loaded instead of piling on the first', () => {
    const { set } = setUp();
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) seen.add(set.pick(undefined, none)!.baseUrl);
    expect(seen.size).toBe(3);
  });

  it("keeps a conversation on its replica even when another is less loaded, while that replica is healthy", () => {
    const { set, byUrl } = setUp();
    byUrl('http://c/v1').inFlight = 7;
    const affinity = { baseUrl: 'http://c/v1' };
    expect(set.pick(affinity, none)!.baseUrl).toBe('http://c/v1');
    set.failed(byUrl('http://c/v1'));
    expect(set.pick(affinity, none)!.baseUrl).not.toBe('http://c/v1');
  });

  it('lets a conversation go from its replica only when that one holds far more streams than the least loaded (bounded-load affinity)', () => {
    const { set, byUrl } = setUp();
    const affinity = { baseUrl: 'http://c/v1' };
    byUrl('http://a/v1').inFlight = 4;
    byUrl('http://b/v1').inFlight = 4;
    byUrl('http://c/v1').inFlight = 16; // 2 × 4 + 8: still its own
    expect(set.pick(affinity, none)!.baseUrl).toBe('http://c/v1');
    byUrl('http://c/v1').inFlight = 17;
    expect(set.pick(affinity, none)!.baseUrl).not.toBe('http://c/v1');
    // After a failover burst: 100 streams on it, none on the replicas back from a restart.
    byUrl('http://a/v1').inFlight = 0;
    byUrl('http://c/v1').inFlight = 100;
    expect(set.pick(affinity, none)!.baseUrl).toBe('http://a/v1');
  });

  it('rests a failed replica, doubling the rest per failure in a row up to the ceiling, and forgets after a success', () => {
    const { set, clock, byUrl } = setUp(['http://a/v1', 'http://b/v1']);
    const a = byUrl('http://a/v1');
    const rests: number[] = [];
    for (let i = 0; i < 4; i++) {
      set.failed(a);
      rests.push(set.states()[0]!.restingForMs);
    }
    expect(rests).toEqual([100, 200, 350, 350]);
    expect(set.pick(undefined, none)!.baseUrl).toBe('http://b/v1');
    expect(set.pick(undefined, none)!.baseUrl).toBe('http://b/v1');

    clock.now += 350;
    expect(set.states()[0]).toMatchObject({ state: 'probing', healthy: false, consecutiveFailures: 4, failures: 4 });
    set.succeeded(a);
    set.failed(a);
    expect(set.states()[0]).toMatchObject({ healthy: false, restingForMs: 100, consecutiveFailures: 1, failures: 5, accepted: 1 });
  });

  it('counts the streams in flight when a replica fell over as one failure, not a run of them (no burst rests it for the ceiling)', () => {
    const { set, clock, byUrl } = setUp(['http://a/v1', 'http://b/v1']);
    const a = byUrl('http://a/v1');
    // Three attempts began at 0; they fail one after another once the replica is down.
    for (const at of [10, 11, 12]) {
      clock.now = at;
      set.failed(a, undefined, 0);
    }
    expect(set.states()[0]).toMatchObject({ consecutiveFailures: 1, failures: 3, restingForMs: 98 });
    // An attempt begun after that failure was counted, failing too: the next in a row.
    clock.now = 120;
    set.failed(a, undefined, 115);
    expect(set.states()[0]).toMatchObject({ consecutiveFailures: 2, failures: 4, restingForMs: 200 });
  });

  it('tells its listener when a replica starts to rest, with the error, and when it takes a stream again', () => {
    const events: unknown[] = [];
    const set = new UpstreamReplicas(URLS, { restMs: 100, now: () => 0, onHealthChange: (e) => events.push(e) });
    const [a, b] = set.replicas as [Replica, Replica];
    const refused = new Error('connect ECONNREFUSED');
    set.succeeded(b);
    set.failed(a, refused);
    set.failed(a, refused);
    set.succeeded(a);
    set.succeeded(a);
    expect(events).toEqual([
      { type: 'resting', baseUrl: 'http://a/v1', restMs: 100, consecutiveFailures: 1, error: refused },
      { type: 'resting', baseUrl: 'http://a/v1', restMs: 200, consecutiveFailures: 2, error: refused },
      { type: 'recovered', baseUrl: 'http://a/v1', consecutiveFailures: 2 },
    ]);
  });

  it('still offers a resting replica when every untried one rests (the one back soonest), and none once all were tried', () => {
    const { set, byUrl } = setUp();
    set.failed(byUrl('http://a/v1'));
    set.failed(byUrl('http://a/v1'));
    set.failed(byUrl('http://b/v1'));
    set.failed(byUrl('http://c/v1'));
    set.failed(byUrl('http://c/v1'));
    set.failed(byUrl('http://c/v1'));
    expect(set.pick(undefined, none)!.baseUrl).toBe('http://b/v1');

    const tried = new Set<Replica>([byUrl('http://b/v1')]);
    expect(set.pick(undefined, tried)!.baseUrl).toBe('http://a/v1');
    tried.add(byUrl('http://a/v1'));
    expect(set.pick(undefined, tried)!.baseUrl).toBe('http://c/v1');
    tried.add(byUrl('http://c/v1'));
    expect(set.pick(undefined, tried)).toBeUndefined();
  });

  it('says a replica whose rest is over is on trial, not healthy, until it succeeds (regression: healthy while it was still down)', () => {
    const { set, clock, byUrl } = setUp(['http://a/v1', 'http://b/v1']);
    const a = byUrl('http://a/v1');
    expect(set.states()[0]).toMatchObject({ state: 'healthy', healthy: true });
    set.failed(a);
    expect(set.states()[0]).toMatchObject({ state: 'resting', healthy: false, restingForMs: 100 });
    clock.now += 100;
    expect(set.states()[0]).toMatchObject({ state: 'probing', healthy: false, restingForMs: 0, consecutiveFailures: 1 });
    set.succeeded(a);
    expect(set.states()[0]).toMatchObject({ state: 'healthy', healthy: true, consecutiveFailures: 0 });
  });

  it('lets one request at a time try a replica whose rest is over; the others go to healthy replicas meanwhile', () => {
    const { set, clock, byUrl } = setUp(['http://a/v1', 'http://b/v1']);
    const [a, b] = [byUrl('http://a/v1'), byUrl('http://b/v1')];
    set.failed(a);
    clock.now += 100;
    b.inFlight = 3;
    // The trial: a has nothing in flight, so it is the least loaded.
    const trial = set.pick(undefined, none)!;
    expect(trial).toBe(a);
    a.inFlight += 1;
    // While the trial runs, every other request goes to b, whatever its load or its conversation.
    for (let i = 0; i < 4; i++) expect(set.pick(undefined, none)).toBe(b);
    expect(set.pick({ baseUrl: 'http://a/v1' }, none)).toBe(b);
    // Only b tried already: a is still offered rather than nothing.
    expect(set.pick(undefined, new Set([b]))).toBe(a);

    // The trial ended without a verdict (the client left): the next request tries a again.
    a.inFlight -= 1;
    expect(set.pick(undefined, none)).toBe(a);
    // It succeeded: a takes requests as any healthy replica does.
    set.succeeded(a);
    a.inFlight = 2;
    expect(set.pick({ baseUrl: 'http://a/v1' }, none)).toBe(a);
  });

  it('is not held back by streams from before its failure, which cannot prove it; a trial holds it at most 10 s', () => {
    const { set, clock, byUrl } = setUp(['http://a/v1', 'http://b/v1']);
    const [a, b] = [byUrl('http://a/v1'), byUrl('http://b/v1')];
    a.inFlight = 3; // long generations, past their first token
    set.failed(a);
    clock.now += 2_100;
    b.inFlight = 5;
    // Regression: a was out of rotation until those three ended, minutes perhaps, not its 2 s.
    expect(set.pick(undefined, none)).toBe(a);
    a.inFlight += 1;
    expect(set.pick(undefined, none)).toBe(b);
    // A trial that never ends (no first token, no failure, no client leaving) holds it 10 s at most.
    clock.now += 10_000;
    expect(set.pick(undefined, none)).toBe(a);
  });

  it('when every replica is unavailable, prefers one on trial (back already) over one still resting, then the least loaded', () => {
    const { set, clock, byUrl } = setUp();
    const [a, b, c] = [byUrl('http://a/v1'), byUrl('http://b/v1'), byUrl('http://c/v1')];
    set.failed(a);
    set.failed(b);
    clock.now += 100;
    set.failed(c);
    a.inFlight = 2;
    b.inFlight = 1;
    expect(set.pick(undefined, none)).toBe(b);
  });

  it('refuses an empty or repeated list', () => {
    expect(() => new UpstreamReplicas([])).toThrow(/at least one/);
    expect(() => new UpstreamReplicas(['http://a/v1', 'http://a/v1'])).toThrow(/twice/);
  });
});
