import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readConfigFile } from '../../gateway/config-file.ts';
import { suiteTempDir } from './temp-dir.ts';

/**
 * A function that writes `content` as a config file in this suite's temp folder and returns the
 * line readConfigFile refuses it with, less its `config file …: ` start; it throws if the file is accepted.
 */
export function configRefusals(prefix: string): (content: unknown) => string {
  const dir = suiteTempDir(prefix);
  let n = 0;
  return (content) => {
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `conveyor-${++n}.json`);
    writeFileSync(file, JSON.stringify(content));
    try {
      readConfigFile(file);
    } catch (err) {
      return (err as Error).message.slice(`config file ${file}: `.length);
    }
    throw new Error(`${file} was accepted`);
  };
}
