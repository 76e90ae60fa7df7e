import type { z } from 'zod';

/**
 * A configuration's zod issues as one line a person fixes a file from: each issue at its full
 * path (`gateway.upstream.timeouts: …`), a misspelt key with the key it was probably meant to be,
 * a value of the wrong kind or out of range with the value itself when `input` (what was checked)
 * is given. zod's own prettifyError names the object that holds a misspelt key, not the key's
 * path, and answers a union (a toolModules entry is a string or an object) with "Invalid input" alone.
 */
export function describeConfigIssues(error: z.ZodError, schema: z.ZodType, input?: unknown): string {
  return flatten(error.issues, []).map((issue) => describe(issue, schema, input)).join('; ');
}

/**
 * Issues whose message states the rule but not the value that broke it (zod's `expected number,
 * received string`, `expected one of "reprompt"|"error"`); the gateway's own custom messages quote
 * the value themselves.
 */
const RULE_ONLY = new Set<string>(['invalid_type', 'invalid_value', 'invalid_union', 'too_small', 'too_big', 'not_multiple_of', 'invalid_format']);

/** How much of a refused value the line quotes: enough to recognise it, not a pasted document. */
const MAX_QUOTED_CHARS = 60;

/**
 * ` (got "8080")` for the value at `path` in `input`; '' where there is none (a missing key) or it
 * sits under a key setting (`apiKey`, `apiKeys`), whose value must never reach a log or a terminal.
 */
function quotedValue(input: unknown, path: readonly PropertyKey[]): string {
  if (path.some((part) => typeof part === 'string' && /keys?$/i.test(part))) return '';
  let value = input;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return '';
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  if (value === undefined) return '';
  const text = JSON.stringify(value) ?? String(value);
  return ` (got ${text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text})`;
}

type Issue = z.core.$ZodIssue;

/**
 * Union issues replaced by the issues of the one branch the value was meant for, when that is
 * clear; a value of none of the union's kinds by one issue naming them all. zod's own answer to
 * the latter was "Invalid input", or, where one branch is a literal (`"http_get": true` against
 * `false | {…}`), that branch's "expected false", as if only false were allowed.
 */
function flatten(issues: readonly Issue[], prefix: PropertyKey[]): Issue[] {
  return issues.flatMap((issue): Issue[] => {
    const path = [...prefix, ...issue.path];
    if (issue.code !== 'invalid_union') return [{ ...issue, path }];
    // A branch whose only complaint is the value's kind (or literal value) at the union itself was not the one meant.
    const kindOnly = (branch: readonly Issue[]) => branch.length === 1 && branch[0]!.path.length === 0 && (branch[0]!.code === 'invalid_type' || branch[0]!.code === 'invalid_value');
    const meant = issue.errors.filter((branch) => !kindOnly(branch));
    if (meant.length === 1) return flatten(meant[0]!, path);
    if (meant.length > 0 || issue.errors.length === 0) return [{ ...issue, path }];
    return [{ ...issue, path, message: neitherKind(issue.errors.map((branch) => branch[0]!)) }];
  });
}

/** "expected false or object, received boolean": what each branch takes, and what the value is. */
function neitherKind(branches: readonly Issue[]): string {
  const expected = branches.flatMap((b) => (b.code === 'invalid_type' ? [b.expected] : b.code === 'invalid_value' ? b.values.map((v) => JSON.stringify(v)) : []));
  const received = branches.map((b) => / received (\S+)$/.exec(b.message)?.[1]).find((r) => r !== undefined);
  return `expected ${[...new Set(expected)].join(' or ')}${received ? `, received ${received}` : ''}`;
}

function describe(issue: Issue, root: z.ZodType, input: unknown): string {
  const where = pathText(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(root, issue.path);
    return issue.keys
      .map((key) => {
        const near = known.find((k) => isNear(key, k));
        return `${where ? `${where}.` : ''}${key}: unknown key${near ? ` (did you mean ${near}?)` : known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`;
      })
      .join('; ');
  }
  // zod words a missing key as a type mismatch with undefined.
  const missing = issue.code === 'invalid_type' && / received undefined$/.test(issue.message);
  const message = missing ? 'missing' : issue.message.replace(/^Invalid (input|option): /, '') + (RULE_ONLY.has(issue.code) ? quotedValue(input, issue.path) : '');
  return where ? `${where}: ${message}` : message;
}

function pathText(path: readonly PropertyKey[]): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i > 0 ? '.' : ''}${String(part)}`)).join('');
}

/** The keys the object schema at `path` takes; none when the path leads elsewhere. */
function knownKeys(root: z.ZodType, path: readonly PropertyKey[]): string[] {
  let candidates: z.core.$ZodType[] = [root];
  for (const part of path) {
    candidates = candidates.flatMap(unwrap).flatMap((schema) => {
      const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
      if (def.type === 'object' && typeof part === 'string') {
        const child = (def['shape'] as Record<string, z.core.$ZodType>)[part];
        return child ? [child] : [];
      }
      if (def.type === 'array' && typeof part === 'number') return [def['element'] as z.core.$ZodType];
      if (def.type === 'record') return [def['valueType'] as z.core.$ZodType];
      return [];
    });
  }
  const keys = candidates.flatMap(unwrap).flatMap((schema) => {
    const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
    return def.type === 'object' ? Object.keys(def['shape'] as object) : [];
  });
  return [...new Set(keys)];
}

/** The schemas a value may be checked by under wrappers (optional, default, pipe …) and unions. */
function unwrap(schema: z.core.$ZodType): z.core.$ZodType[] {
  const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  if (def.type === 'union') return (def['options'] as z.core.$ZodType[]).flatMap(unwrap);
  if (def.type === 'pipe') return unwrap(def['in'] as z.core.$ZodType);
  if (def.type === 'lazy') return unwrap((def['getter'] as () => z.core.$ZodType)());
  const inner = def['innerType'] as z.core.$ZodType | undefined;
  return inner ? unwrap(inner) : [schema];
}

/** A likely misspelling: the same letters in another case, or a small edit (one in three letters) away. */
function isNear(typed: string, known: string): boolean {
  if (typed.toLowerCase() === known.toLowerCase()) return true;
  return editDistance(typed, known) <= Math.max(1, Math.floor(known.length / 3));
}

/** Edit distance where swapping two neighbouring letters ("prot") is one edit, as typing makes it. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
