// The embedded simulator's worker thread (sim-thread.ts). Plain JS on purpose: a worker gets no
// loader from its parent, so where Node cannot strip types itself (Node 20) it registers tsx
// before importing TypeScript.
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { runSimThread } = await import('./sim-thread-worker.ts');
await runSimThread();
