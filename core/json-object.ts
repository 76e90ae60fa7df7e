/**
 * Narrowing for JSON read from the outside (error bodies, schemas, request fields): a JSON object,
 * which `typeof` alone does not tell from `null` or an array.
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
