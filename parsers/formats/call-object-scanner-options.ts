import type { IncrementalJsonScannerOptions, JsonPath } from '../json/incremental-json-scanner.ts';
import type { CallObjectShape } from './call-object-shape.ts';
import type { CallRegistry } from './call-options.ts';

const scannerOptionsByShape = new WeakMap<CallObjectShape, Map<string, IncrementalJsonScannerOptions>>();
/** Distinct scan keys kept per shape: a few in practice (one per set of line fields). */
const MAX_KEPT = 64;

/**
 * The scanner's options for a format's shape and a parser's call options: made once, not for each
 * candidate `{` (llama3-json makes one per `{` in prose) nor for each parser (one per round), as
 * they depend on nothing else. Kept by content, not by the registry or options object: a weak
 * map entry per parser was a tenth of llama3-json's parse time, in allocation and GC.
 */
export function scannerOptions(registry: CallRegistry, shape: CallObjectShape): IncrementalJsonScannerOptions {
  let byKey = scannerOptionsByShape.get(shape);
  if (byKey === undefined) scannerOptionsByShape.set(shape, (byKey = new Map()));
  const key = registry.scanKey;
  let options = byKey.get(key);
  if (options === undefined) {
    options = makeScannerOptions(registry, shape);
    if (byKey.size < MAX_KEPT) byKey.set(key, options);
  }
  return options;
}

function makeScannerOptions(registry: CallRegistry, shape: CallObjectShape): IncrementalJsonScannerOptions {
  const wrapper = shape.wrapperKey;
  const linePaths = registry.linePaths(shape.argsKeys);
  // A wrapped call's paths are those of the call, inside the wrapper key, which the scanner unwraps.
  return {
    keyDepth: 1,
    openDepth: 1,
    maxFieldDepth: 1 + registry.maxFieldDepth,
    unwrapKey: wrapper,
    linePaths: wrapper === undefined ? linePaths : [...linePaths, ...linePaths.map((path): JsonPath => [wrapper, ...path])],
    // A key repeated inside the arguments is malformed, as in JsonArguments.
    uniqueKeysUnder: shape.argsKeys.flatMap((key) => (wrapper === undefined ? [[key]] : [[key], [wrapper, key]])),
  };
}
