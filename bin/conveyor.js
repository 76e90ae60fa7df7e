#!/usr/bin/env node
// The package ships TypeScript sources, written as erasable TypeScript (tsconfig
// erasableSyntaxOnly): Node 22.18+ and 24 strip their types themselves and start the CLI in about
// half the time; elsewhere (Node 20) tsx compiles them on load.
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../gateway/cli.ts');
