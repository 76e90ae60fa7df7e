/** A decimal digit of any script (Unicode's Nd: Arabic-Indic `٤`, Devanagari `४`, fullwidth `４`, …). */
const DECIMAL_DIGIT = /\p{Nd}/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const ONE_DIGIT = /^\p{Nd}$/u;

/**
 * `text` with every decimal digit of any script written as its ASCII one, as Python's int() and
 * float() read them (CPython turns each into its decimal value before parsing): `٤٢` → `42`.
 * Unicode encodes each script's digits as ten consecutive code points, 0 to 9, so a digit's
 * value is its distance from the start of its run of digits, modulo 10 (a run may hold several
 * sets, such as the mathematical digits' five).
 *
 * @example asciiDecimalDigits('٤٢') // '42'
 */
export function asciiDecimalDigits(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.replace(DECIMAL_DIGIT, (digit) => {
    const code = digit.codePointAt(0)!;
    if (code < 0x80) return digit;
    let start = code;
    while (ONE_DIGIT.test(String.fromCodePoint(start - 1))) start -= 1;
    return String((code - start) % 10);
  });
}
