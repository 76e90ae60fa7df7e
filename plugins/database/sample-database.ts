import { existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqlite } from '../sqlite-driver.ts';

/** Where the gateway makes its demo database when no `database.file` is configured (git-ignored). */
export const SAMPLE_DATABASE_FILE = fileURLToPath(new URL('../../dist/sample-data/employees.sqlite', import.meta.url));

const EMPLOYEES: ReadonlyArray<readonly [string, string, string, number]> = [
  ['Ada Lovelace', 'Engineering', 'London', 182_000],
  ['Grace Hopper', 'Engineering', 'Arlington', 176_500],
  ['Alan Turing', 'Research', 'Manchester', 169_000],
  ['Katherine Johnson', 'Research', 'Hampton', 158_250],
  ['Edsger Dijkstra', 'Engineering', 'Austin', 171_000],
  ['Barbara Liskov', 'Architecture', 'Cambridge', 188_000],
  ['Donald Knuth', 'Research', 'Stanford', 190_500],
  ['Margaret Hamilton', 'Engineering', 'Boston', 184_750],
  ['Ken Thompson', 'Operations', 'Berkeley', 165_000],
  ['Frances Allen', 'Compilers', 'Yorktown Heights', 179_900],
];

/**
 * Makes the small `employees` database the Database workload selects from (the paper's "select
 * all rows of a small SQLite file"), unless it exists. Written to a temporary name and renamed, so
 * concurrent gateways never open a half-written file.
 */
export function ensureSampleDatabase(file = SAMPLE_DATABASE_FILE): string {
  if (existsSync(file)) return file;
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  const db = openSqlite(temp);
  try {
    db.exec('CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, department TEXT NOT NULL, city TEXT NOT NULL, salary INTEGER NOT NULL)');
    const insert = db.prepare('INSERT INTO employees (name, department, city, salary) VALUES (?, ?, ?, ?)');
    db.transaction(() => EMPLOYEES.forEach((row) => insert.run(...row)))();
  } finally {
    db.close();
  }
  renameSync(temp, file);
  return file;
}
