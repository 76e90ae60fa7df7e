/**
 * A number as a report cell at a fixed precision. `toFixed` keeps the sign of a value that rounds
 * to zero (`(-0.04).toFixed(1)` is "-0.0"), which read as a loss where there was none (Calculator
 * "−0.0%" in 2026-11-30-all.md); and NaN or Infinity would print as such: "–" says "no figure".
 */
export function fixedDigits(v: number | undefined, digits: number): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  const text = v.toFixed(digits);
  return Number(text) === 0 ? (0).toFixed(digits) : text;
}

/** A difference (added latency, a gain) with its sign either way: "+1.18", "-0.40", and "0.00" when it rounds to none. */
export function signedDigits(v: number | undefined, digits: number): string {
  const text = fixedDigits(v, digits);
  return v !== undefined && Number.isFinite(v) && Number(text) > 0 ? `+${text}` : text;
}
