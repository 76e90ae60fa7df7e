/**
 * Which replica served each recent conversation, by a key the caller derives from the
 * conversation's opening (conversation-key.ts): a client's next turn resends the whole
 * conversation, which that replica's prefix cache already holds. Bounded: the least recently
 * used conversation is forgotten first, and a forgotten one simply goes to the least loaded
 * replica, as a new one does.
 */
export class RecentConversations {
  readonly #max: number;
  /** Map order is insertion order: re-inserting on each use keeps the oldest first. */
  readonly #replicaOf = new Map<string, string>();

  constructor(max = 10_000) {
    this.#max = max;
  }

  /** The replica that served the conversation last, if it is remembered. */
  replicaOf(key: string): string | undefined {
    return this.#replicaOf.get(key);
  }

  remember(key: string, baseUrl: string): void {
    this.#replicaOf.delete(key);
    this.#replicaOf.set(key, baseUrl);
    if (this.#replicaOf.size > this.#max) this.#replicaOf.delete(this.#replicaOf.keys().next().value as string);
  }

  get size(): number {
    return this.#replicaOf.size;
  }
}
