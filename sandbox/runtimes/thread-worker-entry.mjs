// Piscina loads this file in each worker thread. Plain JS on purpose: a worker gets no loader
// from its parent (vitest or tsx), so it registers tsx itself before importing TypeScript.
import { register } from 'tsx/esm/api';

register();
const { default: runThreadTask } = await import('./thread-worker.ts');

export default runThreadTask;
