// Piscina loads this file in each worker thread. Plain JS on purpose: a worker gets no loader
// from its parent (vitest or tsx), so where Node cannot strip types itself (Node 20) it registers
// tsx before importing TypeScript. With native stripping it does not: tsx's hooks thread would
// cost each worker about 0.3 s of CPU (node-recipe.ts: nativeTypeScript).
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { default: runThreadTask, preloadPluginModules } = await import('./thread-worker.ts');
// Before piscina counts this worker ready: the pool's plugins, so that no first call pays for
// their import, a worker started to replace one lost to an abort or a timeout included.
const { workerData } = await import('node:worker_threads');
await preloadPluginModules(workerData?.preload ?? []);

export default runThreadTask;
