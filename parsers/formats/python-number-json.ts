/**
 * A Python float as `json.dumps` writes it (its `repr`): the shortest digits that read back as
 * the same double, which are also JavaScript's, but always marked as a float (`1.0`, not `1`),
 * `-0.0` kept, and scientific notation below 1e-4 and from 1e16 on, with a signed exponent of
 * at least two digits (`1e-05`, `1e+16`). The formats promise the JSON a Python-side parser
 * (vLLM, SGLang) would send; both texts parse to the same double, but a client that compares
 * or logs arguments sees the difference. Finite values only: Python writes `Infinity`, which
 * is no JSON, and the lexers refuse such numbers before they get here.
 *
 * @example pythonFloatJson(1e-5) // '1e-05'
 */
export function pythonFloatJson(value: number): string {
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const [mantissa, exponent] = value.toExponential().split('e') as [string, string];
  const sign = value < 0 ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  const e = Number(exponent);
  // CPython's float_repr_style 'short': repr switches to exponents where decpt <= -4 or decpt > 16.
  if (e < -4 || e >= 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${sign}${digits[0]}${fraction}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  const whole = digits.slice(0, e + 1).padEnd(e + 1, '0');
  const fraction = digits.slice(e + 1);
  return `${sign}${whole}.${fraction === '' ? '0' : fraction}`;
}

/**
 * An integer literal (decimal with an optional sign, or 0x/0o/0b; no underscores) as Python writes the int:
 * every digit, however many (a snowflake id past 2^53, which a double can only round), no
 * leading zeros, no `-0`.
 */
export function pythonIntJson(digits: string): string {
  return BigInt(digits).toString();
}
