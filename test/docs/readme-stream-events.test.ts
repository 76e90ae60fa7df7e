import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// README's `conveyor.type` table is what a client author codes a stream's tool events against: an
// event or field added or renamed in chat-chunk-writer.ts and not there is one a client never reads.
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const WRITER = readFileSync(new URL('../../gateway/chat-chunk-writer.ts', import.meta.url), 'utf8');

/** Each row of the table: its event types (`a` / `b` share a row) → the backticked words of its fields cell. */
function readmeRows(): Map<string, Set<string>> {
  const table = /\| `conveyor\.type` \| fields \|\n\|---\|---\|\n((?:\|.*\|\n)+)/.exec(README)?.[1] ?? '';
  const rows = new Map<string, Set<string>>();
  for (const line of table.trim().split('\n')) {
    const [, types, fields] = /^\| (.*?) \| (.*) \|$/.exec(line) ?? [];
    const words = new Set([...(fields ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
    for (const [, type] of (types ?? '').matchAll(/`([a-z_.]+)`/g)) rows.set(type!, words);
  }
  return rows;
}

/** Each `{ type: '…', key: … }` the writer builds → its keys (`data`, added beside `completed`, is its own case). */
function writtenEvents(): Map<string, Set<string>> {
  const events = new Map<string, Set<string>>();
  for (const [, type, rest] of WRITER.matchAll(/\{ type: '([a-z_.]+)',([^}]*)\}/g)) {
    const keys = events.get(type!) ?? new Set<string>();
    for (const [, key] of rest!.matchAll(/(?:^|,)\s*([a-z_]+)(?::|\s*,|\s*$)/g)) keys.add(key!);
    events.set(type!, keys);
  }
  return events;
}

describe('README.md, the stream events table', () => {
  it('lists every event type chat-chunk-writer.ts sends, and none it does not', () => {
    const written = [...writtenEvents().keys()].sort();
    expect(written.length).toBeGreaterThanOrEqual(7);
    expect([...readmeRows().keys()].sort()).toEqual(written);
  });

  it("names each event's fields in its row", () => {
    const rows = readmeRows();
    for (const [type, keys] of writtenEvents()) {
      for (const key of keys) expect(rows.get(type)?.has(key), `${type}.${key}`).toBe(true);
    }
    expect(rows.get('tool_call.completed')?.has('data')).toBe(true);
  });

  // The writer stamps `t` on every event in one place (ChatChunkWriter.stamped), not in each
  // event's literal above, so the table's rows do not list it: the paragraph over them does.
  it('says above the table that every event has its `t`, and shows it where the writer puts it', () => {
    const above = README.slice(README.indexOf('**How a tool round looks to a client.**'), README.indexOf('| `conveyor.type` | fields |'));
    expect(above).toContain('Every event has a `t`');
    expect(above).toMatch(/"conveyor":\{"type":"[a-z_.]+","t":\d+(\.\d{1,3})?,/);
  });
});
