#!/usr/bin/env node
// The package ships TypeScript sources, written as erasable TypeScript (tsconfig
// erasableSyntaxOnly): Node 22.18+ and 24 strip their types themselves and start the CLI in about
// half the time; elsewhere (Node 20) tsx compiles them on load.
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
try {
  await import('../gateway/cli.ts');
} catch (err) {
  // A module the CLI imports refused its settings as it loaded (a built-in tool's CONVEYOR_*
  // variable that is set but not valid): one line and status 1, as every start-up failure says it.
  if (err?.code !== 'gateway_config_invalid') throw err;
  const { EXIT_FAILURE, printFailure } = await import('../gateway/commands/exit-status.ts');
  printFailure(err.message);
  process.exitCode = EXIT_FAILURE;
}
