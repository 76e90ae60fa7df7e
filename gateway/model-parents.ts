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
 * Asked only for names no rule matches, so the common request never waits on it; only the first
 * such request waits (at most LOOKUP_TIMEOUT_MS, every replica asked at once), and concurrent asks
 * share that look-up. After it, an answer older than `FRESH_MS` is served while a new one is
 * fetched behind it. A failed look-up is no parent (the default format), never a failed request.
 */
export class ModelParents {
  readonly #upstream: GatewayConfig['upstream'];
  readonly #now: () => number;
  #parents: ReadonlyMap<string, string> = new Map();
  #until = -Infinity;
  /** The first look-up is over (answered or not): later ones refresh behind the requests. */
  #asked = false;
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
        this.#asked = true;
      });
      if (!this.#asked) await this.#lookup;
    }
    return this.#parents.get(model);
  }

  async #refresh(): Promise<void> {
    const { baseUrl, apiKey, timeouts } = this.#upstream;
    const totalMs = Math.min(timeouts.totalMs ?? Infinity, LOOKUP_TIMEOUT_MS);
    // Replicas serve the same models: the first that answers speaks for all.
    // Once one has answered, the others' requests are dropped rather than left to their time limit.
    const done = new AbortController();
    const asks = (typeof baseUrl === 'string' ? [baseUrl] : baseUrl).map((url) => listModels({ baseUrl: url, apiKey, timeouts: { ...timeouts, totalMs }, signal: done.signal }));
    try {
      const list = await Promise.any(asks);
      const parents = new Map<string, string>();
      for (const entry of list.data) {
        const parent = entry['parent'];
        if (typeof parent === 'string' && parent !== '' && parent !== entry.id) parents.set(entry.id, parent);
      }
      this.#parents = parents;
      this.#until = this.#now() + FRESH_MS;
    } catch {
      // No replica answered: no parents for a while (those known before stay).
      this.#until = this.#now() + FAILED_MS;
    } finally {
      done.abort();
    }
  }
}
