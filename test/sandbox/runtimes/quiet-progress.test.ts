import { describe, expect, it } from 'vitest';
import { QuietProgress } from '../../../sandbox/runtimes/quiet-progress.ts';

const quiet = (...callIds: string[]): QuietProgress => {
  const set = new QuietProgress();
  for (const callId of callIds) set.add(callId);
  return set;
};

// Only a head with `t` first and `callId` next was recognised: a Python plugin writing
// json.dumps(m, sort_keys=True) (callId, progress, t) had every progress line past its budget
// parsed in full, the CPU the class exists to save.
describe('QuietProgress.drops', () => {
  it('drops a quiet call’s progress with its keys in any order and any spacing (sort_keys put t last)', () => {
    const set = quiet('call_1');
    for (const line of [
      '{"t":"progress","callId":"call_1","progress":{"type":"unit-done","detail":"x"}}',
      '{"callId": "call_1", "progress": {"type": "unit-done", "detail": "x"}, "t": "progress"}',
      '{"progress":{"type":"unit-done","detail":"a [b] {c}, \\"t\\": \\"d\\""},"t":"progress","callId":"call_1"}',
      '  { "t" :"progress" ,\t"progress" : {"type":"output","text":"hi"} , "callId" : "call_1" }  ',
      '{"t":"progr\\u0065ss","callId":"call_1","progress":{}}',
    ]) {
      expect(set.drops(line), line).toBe(true);
    }
  });

  it('keeps progress of a call that is not quiet, whatever its key order', () => {
    const set = quiet('call_1');
    expect(set.drops('{"callId":"call_2","progress":{},"t":"progress"}')).toBe(false);
    expect(set.drops('{"t":"progress","callId":"call_2","progress":{}}')).toBe(false);
    expect(quiet().drops('{"callId":"call_1","progress":{},"t":"progress"}')).toBe(false);
  });

  it('never drops a line that is not progress at its top level', () => {
    const set = quiet('call_1');
    for (const line of [
      // A payload that holds progress-looking keys is not progress.
      '{"t":"result","callId":"call_1","ok":true,"content":"{\\"t\\":\\"progress\\",\\"callId\\":\\"call_1\\"}"}',
      '{"callId":"call_1","data":{"t":"progress","callId":"call_1"},"t":"result","ok":true,"content":""}',
      '{"callId":"call_1","ok":true,"content":"","t":"result","nested":[{"t":"progress"}]}',
      // A repeated key counts by its last value, as JSON.parse reads it.
      '{"callId":"call_1","t":"progress","t":"result","ok":true,"content":""}',
      '{"callId":"call_1","t":["progress"]}',
      // Not one whole JSON object: parsed as before, and refused there.
      '{"callId":"call_1","t":"progress"} trailing',
      '{"callId":"call_1","t":"progress"',
      'x{"callId":"call_1","t":"progress"}',
      '{"callId":"call_1","t":"progress","progress":"unterminated}',
    ]) {
      expect(set.drops(line), line).toBe(false);
    }
  });

  it('keeps a call’s progress once it has left the set', () => {
    const set = quiet('call_1');
    set.delete('call_1');
    expect(set.drops('{"callId":"call_1","t":"progress","progress":{}}')).toBe(false);
  });
});
