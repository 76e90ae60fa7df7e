import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SimConfigError } from '../core/errors.ts';
import { scenarioSchema, type ParsedScenario } from './scenario-schema.ts';

/** The shipped scenarios (sine-wave, sine-wave-stdlib). */
export const SCENARIOS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'scenarios');

/** A validated scenario plus where it came from, for error messages and /v1/models. */
export interface LoadedScenario extends ParsedScenario {
  origin: string;
}

export function parseScenario(value: unknown, origin: string): LoadedScenario {
  const parsed = scenarioSchema.safeParse(value);
  if (!parsed.success) {
    throw new SimConfigError(`${origin} is not a valid scenario: ${z.prettifyError(parsed.error)}`);
  }
  for (const [i, rule] of parsed.data.rules.entries()) {
    const match = rule.when.lastUser;
    if (typeof match === 'object' && 'regex' in match) {
      try {
        new RegExp(match.regex, match.flags);
      } catch (cause) {
        throw new SimConfigError(`${origin}: rule ${i} has an invalid regex /${match.regex}/`, { cause });
      }
    }
  }
  return { ...parsed.data, origin };
}

/**
 * Every `*.json` file of `dir`, in file-name order (the order in which rules are tried). A file
 * holds one scenario; its `name` defaults to the file name without `.json`.
 */
export function loadScenarioDir(dir: string): LoadedScenario[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  } catch (cause) {
    throw new SimConfigError(unreadableDir(dir, cause), { cause });
  }
  return files.map((file) => {
    const path = join(dir, file);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (cause) {
      throw new SimConfigError(`scenario file ${path} cannot be read (${messageOf(cause)})`, { cause });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      // The parser's own words carry the position (`Expected double-quoted property name in JSON at position 84 (line 5 column 3)`).
      throw new SimConfigError(`scenario file ${path} is not valid JSON: ${messageOf(cause)}`, { cause });
    }
    if (json !== null && typeof json === 'object' && !Array.isArray(json) && !('name' in json)) {
      json = { name: basename(file, '.json'), ...json };
    }
    return parseScenario(json, path);
  });
}

/**
 * Why a scenario folder cannot be read, in words: a file given where the folder belongs
 * (`--sim-scenarios my.json`) is the likely mistake, and ENOTDIR alone did not say it.
 */
function unreadableDir(dir: string, cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'ENOTDIR') return `scenario directory ${dir} is a file, not a folder: scenarios are given by folder (--sim-scenarios DIR, sim.scenarioDirs), each *.json file in it one scenario; give the folder that holds this file`;
  if (code === 'ENOENT') return `scenario directory ${dir} does not exist`;
  return `scenario directory ${dir} cannot be read (${messageOf(cause)})`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
