import { performance } from 'node:perf_hooks';
import { listModels } from '../llm-client/list-models.ts';
import type { GatewayConfig } from './config.ts';

/** How long one `/models` answer is trusted: adapters are loaded and unloaded at run time (vLLM's /v1/load_lora_adapter). */
const FRESH_MS = 30_000;
/** After a failed look-up, how long requests go without asking again (a down upstream fails them anyway). */
const FAILED_MS = 5_000;
/** The longest a look-up may hold a request; past it the request goes on without a parent. */
const LOOKUP_TIMEOUT_MS = 2_000;

/**
 * The base model of an adapter the upstream serves: vLLM lists a LoRA adapter in `/v1/models`
 * with `parent` set to the model it was trained on (the simulator lists its `sim-<scenario>`
 * models the same way). A request for `my-sql-lora` writes tool calls in its base model's format,
 * so when no `toolParsers` rule matches the adapter's own name, its parent's name is tried.
 *
 * Asked only for names no rule matches, so the common request never waits on it; one `/models`
 * answer serves every request for `FRESH_MS`, and concurrent asks share one look-up. A failed
 * look-up is no parent (the default format), never a failed request.
 */
export class ModelParents {
  readonly #upstream: GatewayConfig['upstream'];
  readonly #now: () => number;
  #parents: ReadonlyMap<string, string> = new Map();
  #until = -Infinity;
  #lookup: Promise<void> | undefined;

  constructor(upstream: GatewayConfig['upstream'], now: () => number = () => performance.now()) {
    this.#upstream = upstream;
    this.#now = now;
  }

  /** `model`'s parent as the upstream lists it, or undefined (a base model, unknown, or the upstream did not say). */
  async parentOf(model: string): Promise<string | undefined> {
    if (this.#now() >= this.#until) {
      this.#lookup ??= this.#refresh().finally(() => {
        this.#lookup = undefined;
      });
      await this.#lookup;
    }
    return this.#parents.get(model);
  }

  async #refresh(): Promise<void> {
    const { baseUrl, apiKey, timeouts } = this.#upstream;
    // Replicas serve the same models: the first that answers speaks for all.
    for (const url of typeof baseUrl === 'string' ? [baseUrl] : baseUrl) {
      try {
        const list = await listModels({ baseUrl: url, apiKey, timeouts: { ...timeouts, totalMs: Math.min(timeouts.totalMs ?? Infinity, LOOKUP_TIMEOUT_MS) } });
        const parents = new Map<string, string>();
        for (const entry of list.data) {
          const parent = entry['parent'];
          if (typeof parent === 'string' && parent !== '' && parent !== entry.id) parents.set(entry.id, parent);
        }
        this.#parents = parents;
        this.#until = this.#now() + FRESH_MS;
        return;
      } catch {
        // The next replica, or no parents for a while.
      }
    }
    this.#until = this.#now() + FAILED_MS;
  }
}
