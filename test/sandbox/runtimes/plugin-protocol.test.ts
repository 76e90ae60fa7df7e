import { describe, expect, it } from 'vitest';
import { parseChildMessage } from '../../../sandbox/runtimes/plugin-protocol.ts';

// A plugin in Python writes `'data': None`, or `'reject': None if ok else why`, for "no such field":
// both were protocol errors (`data: expected object, received null`), and the second turned the
// plugin's accept of a piece into a failed call. JSON null now means absent for the optional fields.

const parse = (message: Record<string, unknown>) => parseChildMessage(JSON.stringify(message));

describe('parseChildMessage: null for an optional field', () => {
  it.for([
    [{ t: 'ready', pid: 7, guest: 'none', guestError: null }, 'guestError'],
    [{ t: 'loaded', module: 'm', plugin: null, error: null }, 'plugin', 'error'],
    [{ t: 'verdict', callId: 'c', seq: 0, reject: null }, 'reject'],
    [{ t: 'result', callId: 'c', ok: true, content: 'x', data: null, cpuMs: null, thrown: null }, 'data', 'cpuMs', 'thrown'],
    [{ t: 'failed', callId: 'c', content: 'x', code: null, thrown: null }, 'code', 'thrown'],
  ] as const)('reads as absent: %j', ([message, ...fields]) => {
    const parsed = parse(message);
    expect(parsed).toHaveProperty('message');
    const fieldsOf = (parsed as { message: Record<string, unknown> }).message;
    // Downstream sees undefined, never null, so `reject !== undefined` still means a rejection.
    for (const field of fields) expect(fieldsOf[field], field).toBeUndefined();
    expect(Object.values(fieldsOf)).not.toContain(null);
  });

  it('keeps the values that are given', () => {
    expect(parse({ t: 'verdict', callId: 'c', seq: 1, reject: 'why' })).toEqual({ message: { t: 'verdict', callId: 'c', seq: 1, reject: 'why' } });
    expect(parse({ t: 'result', callId: 'c', ok: true, content: 'x', data: { a: 1 }, cpuMs: 3 })).toMatchObject({ message: { data: { a: 1 }, cpuMs: 3 } });
  });
});

describe('parseChildMessage: what stays refused, and how it is said', () => {
  it.for([
    [{ t: 'result', callId: 'c', ok: true, content: null }, 'content: expected string, received null'],
    [{ t: 'result', callId: null, ok: true, content: 'x' }, 'callId: expected string, received null'],
    [{ t: 'verdict', callId: 'c', seq: null }, 'seq: expected number, received null'],
    [{ t: 'ready', pid: 7, guest: null }, 'guest: expected one of "isolated-vm"|"node-vm"|"none"'],
    [{ t: 'result', callId: 'c', ok: true, content: 'x', data: 'rows' }, 'data: expected object, received string'],
    [{ t: 'verdict', callId: 'c', seq: 0, reject: ' ' }, 'reject: a reject with no reason: the model reads the reason to know what to write instead'],
    [{ t: null }, 't: null is not a message type: ready, loaded, progress, verdict, result, failed, aborted'],
    [{ callId: 'c' }, 't: missing: ready, loaded, progress, verdict, result, failed, aborted'],
  ] as const)('%j', ([message, why]) => {
    expect(parse(message)).toEqual({ why });
  });

  it('a line that is null, or not JSON', () => {
    expect(parseChildMessage('null')).toEqual({ why: 'expected an object, received null' });
    expect(parseChildMessage('{"t": "ready",')).toEqual({ why: 'not JSON' });
  });
});
