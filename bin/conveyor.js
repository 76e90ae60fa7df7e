#!/usr/bin/env node
// The package ships TypeScript sources; tsx compiles them on load (esbuild, ~ms per file).
import { register } from 'tsx/esm/api';

register();
await import('../gateway/cli.ts');
