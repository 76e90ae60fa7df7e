import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { readProcessTable } from '../../sandbox/process-tree.ts';
import { SINE_STDLIB_REQUEST, eventually, startTestConveyor } from '../support/conveyor-fixture.ts';
import { getJson, streamChat } from '../support/sse-client.ts';

describe('a client that goes away mid-stream', () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor();
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('cancels its upstream decode and kills its Python process', async () => {
    const before = conveyor.sim!.counters();
    const client = new AbortController();
    let sawCellPids: number[] = [];
    let requestId: string | undefined;
    const streamed = streamChat(
      conveyor.gateway.url,
      SINE_STDLIB_REQUEST,
      (chunk) => {
        requestId = chunk.id;
        // Leave once a statement has run: the cell is alive and the decode is mid-block.
        if (chunk.conveyor?.type === 'tool_call.progress' && !client.signal.aborted) {
          sawCellPids = conveyor.sandbox!.cellPids();
          client.abort();
        }
      },
      client.signal,
    );
    await expect(streamed).rejects.toThrow();
    expect(sawCellPids.length).toBeGreaterThan(0);

    // The simulator saw the sequence leave its batch, and nothing is decoding any more.
    await eventually(() => conveyor.sim!.counters().abortedSequences === before.abortedSequences + 1, 'the sim counts one aborted sequence');
    await eventually(() => conveyor.sim!.counters().running === 0, 'the batch is empty');
    // The cell's processes are gone, on the host's view of the process table.
    await eventually(() => conveyor.sandbox!.cellPids().length === 0, 'no cell process remains');
    // Gone, or dead and not yet reaped by the zygote (a zombie still answers kill(pid, 0)).
    const alive = (pid: number) => !['Z', 'X', undefined].includes(readProcessTable().get(pid)?.state);
    await eventually(() => !sawCellPids.some(alive), 'every cell process seen mid-call is dead');

    const timeline = await getJson(conveyor.gateway.url, `/v1/requests/${requestId}/timeline`);
    const events = timeline.json.events as TimelineEvent[];
    const types = events.map((e) => e.type);
    expect(types).toContain('abort');
    expect(types).not.toContain('decode-end');
    // The python call the decode never finished ends where the request did, not never.
    const started = events.filter((e) => e.type === 'tool-start');
    expect(started).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool-end')).toEqual([expect.objectContaining({ callId: started[0]!.callId, detail: 'aborted' })]);
  });

  it('leaves the gateway serving the next request', async () => {
    const next = await streamChat(conveyor.gateway.url, SINE_STDLIB_REQUEST);
    expect(next.done).toBe(true);
    expect(next.content).toContain('samples=13 peak=1.000');
  });
});
