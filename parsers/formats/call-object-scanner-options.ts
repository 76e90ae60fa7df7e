import type { IncrementalJsonScannerOptions, JsonPath } from '../json/incremental-json-scanner.ts';
import type { CallObjectShape } from './call-object-shape.ts';
import type { CallRegistry } from './call-options.ts';

const scannerOptionsByShape = new WeakMap<CallObjectShape, WeakMap<CallRegistry, IncrementalJsonScannerOptions>>();

/**
 * The scanner's options for a format's shape and a parser's registry: made once, not for each
 * candidate `{` (llama3-json makes one per `{` in prose), as they depend on nothing else.
 */
export function scannerOptions(registry: CallRegistry, shape: CallObjectShape): IncrementalJsonScannerOptions {
  let byRegistry = scannerOptionsByShape.get(shape);
  if (byRegistry === undefined) scannerOptionsByShape.set(shape, (byRegistry = new WeakMap()));
  let options = byRegistry.get(registry);
  if (options === undefined) {
    const wrapper = shape.wrapperKey;
    const linePaths = registry.linePaths(shape.argsKeys);
    // A wrapped call's paths are those of the call, inside the wrapper key, which the scanner unwraps.
    options = {
      keyDepth: 1,
      openDepth: 1,
      maxFieldDepth: 1 + registry.maxFieldDepth,
      unwrapKey: wrapper,
      linePaths: wrapper === undefined ? linePaths : [...linePaths, ...linePaths.map((path): JsonPath => [wrapper, ...path])],
      // A key repeated inside the arguments is malformed, as in JsonArguments.
      uniqueKeysUnder: shape.argsKeys.flatMap((key) => (wrapper === undefined ? [[key]] : [[key], [wrapper, key]])),
    };
    byRegistry.set(registry, options);
  }
  return options;
}
