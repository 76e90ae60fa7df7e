import { statSync } from 'node:fs';
import path from 'node:path';
import { GatewayConfigError } from '../core/errors.ts';
import type { BuiltinPluginsConfig } from './builtin-plugins-config.ts';
import { SqliteSearchIndex } from './search/sqlite-search-index.ts';
import { openSqlite } from './sqlite-driver.ts';

/** The data files the built-in plugins' settings name, made absolute (the working directory for `--plugins`; a config file's paths arrive absolute). */
export interface BuiltinDataFiles {
  /** `plugins.search.index`, when set (and search is on, on its SQLite backend). */
  searchIndex?: string;
  /** `plugins.database.file`, when set (and database is on). */
  databaseFile?: string;
}

/**
 * Checks, at start-up, that each data file a built-in plugin's settings name is there and is what
 * the plugin reads, and throws a GatewayConfigError naming the setting otherwise. The plugins
 * themselves open their files in a worker or a sandboxed process, on the first call: a missing
 * search index then failed every search (the model answering from the error), and a missing
 * database file was a plain Error with a stack trace, not the CLI's one line.
 */
export function checkBuiltinDataFiles(config: BuiltinPluginsConfig): BuiltinDataFiles {
  const files: BuiltinDataFiles = {};
  if (config.search !== false && !config.search.url && config.search.index !== undefined) {
    const file = path.resolve(config.search.index);
    checkSearchIndex('plugins.search.index', file);
    files.searchIndex = file;
  }
  if (config.database !== false && config.database.file !== undefined) {
    const file = path.resolve(config.database.file);
    checkSqliteDatabase('plugins.database.file', file);
    files.databaseFile = file;
  }
  return files;
}

/** A SQLite file the database plugin can open read-only: there, a file, and a database (SQLite reads the header only on the first statement). */
export function checkSqliteDatabase(setting: string, file: string): void {
  checkRegularFile(setting, file, '');
  checkReadableByOthers(setting, file);
  let db;
  try {
    db = openSqlite(file, { readonly: true, fileMustExist: true });
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (err) {
    throw new GatewayConfigError(`${setting}: ${file} is not a SQLite database the gateway can read (${(err as Error).message})`, { cause: err });
  } finally {
    db?.close();
  }
}

/** An index `npm run build:search-index` wrote: opened as the search plugin opens it, then closed. */
export function checkSearchIndex(setting: string, file: string): void {
  const build = ' (build one with `npm run build:search-index -- --out FILE`, or leave `index` out for the default)';
  checkRegularFile(setting, file, build);
  try {
    new SqliteSearchIndex(file).close();
  } catch (err) {
    throw new GatewayConfigError(`${setting}: ${(err as Error).message}${build}`, { cause: err });
  }
}

/**
 * The database plugin runs in a sandboxed process; as root the gateway starts it as a uid of its
 * own (sandbox/runtimes), which reads the file as "others" do. Root reads a 0600 file fine, so
 * the check above passed and then every query failed ("unable to open database file"). Its
 * folder is bound into the sandbox, whose own parent folders anyone may search.
 */
function checkReadableByOthers(setting: string, file: string): void {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return;
  if ((statSync(file).mode & 0o004) === 0) {
    throw new GatewayConfigError(`${setting}: ${file} is not readable by other users, and the database plugin runs as an unprivileged uid of its own (chmod o+r it)`);
  }
}

function checkRegularFile(setting: string, file: string, hint: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new GatewayConfigError(`${setting}: ${code === 'ENOENT' || code === 'ENOTDIR' ? `no such file ${file}` : (err as Error).message}${hint}`, { cause: err });
  }
  if (!isFile) throw new GatewayConfigError(`${setting}: ${file} is not a file${hint}`);
}
