import { describe, expect, it } from 'vitest';
import { CallStartQueue } from '../../parsers/formats/call-start-queue.ts';
import { EventList } from '../../parsers/formats/event-list.ts';

const line = (text: string, lineNo: number) => ({ kind: 'line' as const, text, lineNo });

describe('CallStartQueue', () => {
  it('holds argument text and pieces written before the name, and releases them in order right after call-start', () => {
    const queue = new CallStartQueue();
    const before = new EventList();
    queue.args('{"code": "', before);
    queue.piece(line('x = 1\n', 1), 'code', before);
    queue.args('x = 1\\n', before);
    queue.piece(line('ignored\n', 1), 'other', before);
    expect(before.events).toEqual([]);
    expect(queue.callId).toBeUndefined();

    const out = new EventList();
    queue.start('call_1', 'python', 'code', out);
    queue.args('"}', out);
    expect(queue.callId).toBe('call_1');
    expect(out.events).toEqual([
      { type: 'call-start', callId: 'call_1', name: 'python' },
      { type: 'call-args', callId: 'call_1', text: '{"code": "' },
      { type: 'call-piece', callId: 'call_1', piece: line('x = 1\n', 1) },
      // Line pieces of an argument that is not the tool's line field are not sent; field pieces are.
      { type: 'call-args', callId: 'call_1', text: 'x = 1\\n"}' },
    ]);
  });

  it('drops what it holds when the call fails before its start', () => {
    const queue = new CallStartQueue();
    queue.args('{"a": 1', new EventList());
    queue.clear();
    const out = new EventList();
    queue.start('call_1', 'f', undefined, out);
    expect(out.events).toEqual([{ type: 'call-start', callId: 'call_1', name: 'f' }]);
  });
});
