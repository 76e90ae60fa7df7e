/** vLLM's KV-cache block size in tokens: prefixes are cached, and found, in whole blocks. */
export const BLOCK_TOKENS = 16;

/**
 * vLLM's automatic prefix caching (on by default since V1), as far as timing needs it: a prompt's
 * full 16-token blocks are known by a hash chained over every token before them, a new prompt
 * reuses the longest run of leading blocks already held, and only the rest is prefilled. Blocks
 * are evicted least recently used once the cache holds `capacityTokens`.
 *
 * Simplified: blocks count as cached from the step that admits their prompt (vLLM: once computed,
 * one step later), generated tokens are not cached (the next round's prompt re-templates the
 * model's turn, so in this simulator it rarely matches them anyway), and the cache's capacity is
 * not shared with the running sequences' own KV.
 */
export class PrefixCache {
  readonly capacityBlocks: number;
  /** Block hash → nothing; Map order is the LRU order (oldest first). */
  readonly #blocks = new Map<number, true>();

  constructor(capacityTokens: number) {
    this.capacityBlocks = Math.floor(capacityTokens / BLOCK_TOKENS);
  }

  clear(): void {
    this.#blocks.clear();
  }

  get cachedTokens(): number {
    return this.#blocks.size * BLOCK_TOKENS;
  }

  /**
   * Admits a prompt: returns how many of its leading tokens were cached (at most all but the last,
   * which vLLM always computes to get the first token's logits), then caches all its full blocks.
   */
  admit(tokenIds: readonly number[]): number {
    if (this.capacityBlocks === 0) return 0;
    const hashes = blockHashes(tokenIds);
    let hit = 0;
    while (hit < hashes.length && this.#blocks.has(hashes[hit]!)) hit++;
    for (const hash of hashes) {
      this.#blocks.delete(hash);
      this.#blocks.set(hash, true);
    }
    for (const oldest of this.#blocks.keys()) {
      if (this.#blocks.size <= this.capacityBlocks) break;
      this.#blocks.delete(oldest);
    }
    return Math.min(hit * BLOCK_TOKENS, Math.max(0, tokenIds.length - 1));
  }
}

/**
 * One hash per full block, each covering every token from the start of the prompt (so equal hashes
 * mean equal prefixes, as in vLLM). Two 32-bit FNV-1a lanes with different seeds make a 53-bit key.
 */
function blockHashes(tokenIds: readonly number[]): number[] {
  const hashes: number[] = [];
  let a = 0x811c9dc5;
  let b = 0x01000193;
  const full = tokenIds.length - (tokenIds.length % BLOCK_TOKENS);
  for (let i = 0; i < full; i++) {
    const id = tokenIds[i]!;
    a = Math.imul(a ^ id, 0x01000193);
    b = Math.imul(b ^ (id + 0x9e3779b9), 0x85ebca6b);
    if ((i + 1) % BLOCK_TOKENS === 0) hashes.push((a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff));
  }
  return hashes;
}
