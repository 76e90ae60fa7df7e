// Piscina loads this file in each worker thread. Plain JS on purpose: a worker gets no loader
// from its parent (vitest or tsx), so where Node cannot strip types itself (Node 20) it registers
// tsx before importing TypeScript. With native stripping it does not: tsx's hooks thread would
// cost each worker about 0.3 s of CPU (node-recipe.ts: nativeTypeScript).
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { default: runThreadTask, preloadPluginModules } = await import('./thread-worker.ts');
// The pool's plugins, imported (and their onLoad run) as the worker starts, so that no first call
// pays for their import, a worker started to replace one lost to an abort or a timeout included.
// Not awaited: a call waits for its own plugin's load only (runThreadTask), so one plugin whose
// onLoad hangs does not hold every other plugin's calls until its limit (review 7).
const { workerData } = await import('node:worker_threads');
void preloadPluginModules(workerData?.preload ?? []);

export default runThreadTask;
