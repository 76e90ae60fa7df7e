import { chmodSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import database from '../../plugins/database/database-plugin.ts';
import { createRuntimePools, runScriptedCall, toolFromPlugin } from '../../plugins/kit/index.ts';
import { openSqlite } from '../../plugins/sqlite-driver.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const dir = suiteTempDir('conveyor-database-sandboxed-');
chmodSync(dir, 0o755); // as root the plugin runs as a uid of its own, which reads what others may
const pools = createRuntimePools({ process: { uidBase: 1_900_940_000 } });
afterAll(async () => {
  chmodSync(dir, 0o700);
  await pools.close();
});

// A time limit no slow machine reaches: these tests are about what the sandbox lets SQLite do.
const toolFor = (file: string) =>
  toolFromPlugin(database, { moduleUrl: new URL(`../../plugins/database/database-plugin.ts?file=${encodeURIComponent(file)}&timeLimitMs=30000`, import.meta.url), pools, readOnlyPaths: [dir] });
const ask = (file: string, query: string) => runScriptedCall(toolFor(file), { pieces: [{ kind: 'field', path: ['query'], value: query }], args: { query } });

describe('database plugin in its sandboxed process, which can write little or nothing', () => {
  it('sorts past the page cache in memory (a temporary file past the sandbox\'s 16 MiB failed the query with "disk I/O error")', async () => {
    const file = path.join(dir, 'big.sqlite');
    const db = openSqlite(file);
    // 40 MB of distinct text, well past SQLite's 16 MB page cache: DISTINCT spills.
    db.exec("CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 400000) INSERT INTO t SELECT printf('%.100c%d', 'a', i) FROM n");
    db.close();
    chmodSync(file, 0o644);
    expect((await ask(file, 'SELECT count(*) AS n FROM (SELECT DISTINCT x FROM t)')).result?.content).toBe('n\n400000\n(1 row)');
  }, 90_000);

  // The sandbox grants the file's folder read-only (and, as root, runs the query as a uid of its
  // own): with no program holding a WAL file open there is no -shm, and SQLite cannot make one.
  it('says a WAL-mode file is in WAL mode, rather than only "unable to open database file"', async () => {
    const file = path.join(dir, 'app.sqlite');
    const db = openSqlite(file);
    db.pragma('journal_mode = WAL');
    db.exec("CREATE TABLE t(x); INSERT INTO t VALUES ('a')");
    db.close(); // removes the -wal and -shm
    chmodSync(file, 0o644);
    chmodSync(dir, 0o555); // read-only for a gateway that is not root, too
    expect((await ask(file, 'SELECT x FROM t')).result).toEqual({
      ok: false,
      content:
        'error: cannot open the database: the file is in WAL mode and its folder is read-only to this tool, so SQLite cannot create (or open) the -shm file it needs beside it (the operator can switch it: PRAGMA journal_mode=DELETE)',
    });
  }, 90_000);
});
