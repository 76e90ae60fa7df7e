import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { exponential, seededRandom } from '../load/seeded-random.ts';
import { spawnSim, type SimProcess } from '../sim-process.ts';
import { summarize, type Summary } from '../stats.ts';
import { replicasMarkdown } from './replicas-report.ts';

const SCENARIOS = fileURLToPath(new URL('./scenarios', import.meta.url));
const MODEL = 'mistral-7b-instruct-sim';
const SYSTEM = 'You are a research assistant. Read the document the user pastes, check its figures with the lookup tool, and answer briefly.';

export type AffinityMode = 'kept' | 'spread';

export interface ReplicasOptions {
  quick?: boolean;
  /** Timing profile of both simulator replicas (default: the measured H100 profile). */
  profile?: string;
  /** Approximate tokens of the document each conversation carries. */
  docTokens?: number;
  /** Conversations per pass; passes alternate kept, spread, kept, spread… */
  conversations?: number;
  passes?: number;
  /** New conversations per second, Poisson arrivals (open loop). */
  ratePerS?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface ConversationRecord {
  mode: AffinityMode;
  /** The first turn (three rounds), request to answer. */
  e2eMs: number;
  /** Round start → first token, ms, per round of the first turn. */
  ttftMs: number[];
  /** The replica that accepted each round of the first turn. */
  replicas: string[];
  /** The client's next turn (one round, resending the whole conversation): its TTFT, and its replica. */
  nextTurn: { ttftMs: number; replica: string };
}

export interface ModeResult {
  mode: AffinityMode;
  conversations: number;
  e2eMs: Summary;
  firstRoundTtftMs: Summary;
  laterRoundTtftMs: Summary;
  /** Prompt tokens found in the replicas' prefix caches / prompt tokens admitted. */
  cacheHitRate: number;
  /** Prompt tokens actually prefilled, per conversation. */
  prefilledTokensPerConversation: number;
  /** Conversations whose rounds all went to one replica. */
  oneReplicaShare: number;
  /** The client's next turn: its TTFT, and the share that went to the replica of the first turn. */
  nextTurnTtftMs: Summary;
  nextTurnSameReplicaShare: number;
  /** Share of rounds each replica took. */
  replicaShares: number[];
}

export interface ReplicasResult {
  meta: { profile: string; replicas: number; docTokens: number; conversations: number; passes: number; ratePerS: number; promptTokensPerConversation: number };
  modes: Record<AffinityMode, ModeResult>;
  records: ConversationRecord[];
  markdown: string;
  json: unknown;
  wallS: number;
}

const countersSchema = z.looseObject({ prefixCacheQueries: z.number(), prefixCacheHits: z.number(), promptTokens: z.number() });
type Counters = z.infer<typeof countersSchema>;

/**
 * Two simulator replicas (own processes) behind two gateways over both: one keeps each
 * conversation on its replica (the default), one sends every round to the least loaded replica.
 * Each conversation is two client turns: three tool rounds over the document, then a follow-up
 * question that resends all of it.
 * The same kind of conversation alternates between them pass by pass, each with a document of its
 * own and the same seeded arrival process, so only routing differs; the replicas' prefix-cache
 * counters say how much prefill it saved.
 */
export async function runReplicas(o: ReplicasOptions = {}): Promise<ReplicasResult> {
  const started = performance.now();
  const profile = o.profile ?? 'mistral-7b-h100';
  const docTokens = o.docTokens ?? (o.quick ? 600 : 2_000);
  const conversations = o.conversations ?? (o.quick ? 4 : 24);
  const passes = o.passes ?? (o.quick ? 2 : 6);
  const ratePerS = o.ratePerS ?? (o.quick ? 4 : 6);
  const total = conversations * passes;
  const random = seededRandom(20261126);
  const bodies = Array.from({ length: total }, (_, i) => conversationBody(document(random, docTokens, i)));

  const sims = await Promise.all([0, 1].map(() => spawnSim(profile, { scenarios: [SCENARIOS] })));
  const gateways: GatewayHandle[] = [];
  try {
    const tools = new Map([['lookup', inlineTool(lookup)]]);
    const baseUrl = sims.map((s) => s.url);
    for (const conversationAffinity of [true, false]) {
      gateways.push(await startGateway({ port: 0, upstream: { baseUrl, conversationAffinity } }, { tools }));
    }
    // The simulator's tokenizer is far slower than vLLM's: each replica tokenizes every document
    // once before the measurement, so neither routing pays for it; then the caches start empty.
    await warmTokenizers(sims, bodies);
    await Promise.all(sims.map((s) => fetch(new URL('/reset_prefix_cache', s.url), { method: 'POST' })));

    const records: ConversationRecord[] = [];
    const hits: Record<AffinityMode, { queries: number; hits: number }> = { kept: { queries: 0, hits: 0 }, spread: { queries: 0, hits: 0 } };
    let done = 0;
    for (let pass = 0; pass < passes; pass++) {
      const mode: AffinityMode = pass % 2 === 0 ? 'kept' : 'spread';
      const gateway = gateways[mode === 'kept' ? 0 : 1]!;
      const before = await Promise.all(sims.map(counters));
      const batch = bodies.slice(pass * conversations, (pass + 1) * conversations);
      // Open loop: each conversation starts at its Poisson arrival time whatever the others do,
      // so the replicas' loads differ when a round is routed, as they do in service.
      let at = 0;
      const startsMs = batch.map(() => (at += exponential(random, ratePerS) * 1000));
      await Promise.all(
        batch.map(async (body, i) => {
          await sleep(startsMs[i]!);
          records.push(await converse(gateway, body, mode));
          o.onProgress?.(++done, total);
        }),
      );
      const after = await Promise.all(sims.map(counters));
      for (let i = 0; i < sims.length; i++) {
        hits[mode].queries += after[i]!.prefixCacheQueries - before[i]!.prefixCacheQueries;
        hits[mode].hits += after[i]!.prefixCacheHits - before[i]!.prefixCacheHits;
      }
    }

    const modes = {
      kept: summarizeMode('kept', records, hits.kept, baseUrl),
      spread: summarizeMode('spread', records, hits.spread, baseUrl),
    };
    const meta = {
      profile,
      replicas: sims.length,
      docTokens,
      conversations,
      passes,
      ratePerS,
      promptTokensPerConversation: Math.round(hits.kept.queries / modes.kept.conversations),
    };
    const wallS = (performance.now() - started) / 1000;
    const markdown = replicasMarkdown(meta, modes, wallS);
    return { meta, modes, records, markdown, json: { meta, modes, wallS, records }, wallS };
  } finally {
    await Promise.allSettled(gateways.map((g) => g.close()));
    await closeUpstreamPools();
    await Promise.allSettled(sims.map((s) => s.close()));
  }
}

const lookup = definePlugin({
  name: 'lookup',
  description: 'Looks a figure up in the company database',
  parameters: z.object({ key: z.string() }),
  consumes: 'field',
  hooks: { onEnd: ({ key }) => `${key}: 41.2 million` },
});

const WORDS = (
  'revenue growth quarter margin forecast customer region supply demand pricing inventory ledger audit ' +
  'segment churn retention pipeline hiring budget capital expense dividend merger contract shipment ' +
  'warehouse logistics tariff currency interest inflation payroll vendor invoice subscription license'
).split(' ');

/** A pseudo-random document of about `tokens` tokens, unique to conversation `index`. */
function document(random: () => number, tokens: number, index: number): string {
  const words: string[] = [`Report ${index}.`];
  // About 1.6 tokens per word for these words with the Mistral tokenizer, counting the figures.
  for (let i = 0; words.length < tokens / 1.6; i++) {
    words.push(WORDS[Math.floor(random() * WORDS.length)]!);
    if (i % 12 === 11) words.push(`${Math.floor(random() * 1000)}.`);
  }
  return words.join(' ');
}

function conversationBody(doc: string): Record<string, unknown> {
  return {
    model: MODEL,
    scenario: 'replicas-research',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `${doc}\n\nDoes the revenue in this report grow?` },
    ],
  };
}

async function converse(gateway: GatewayHandle, body: Record<string, unknown>, mode: AffinityMode): Promise<ConversationRecord> {
  const t0 = performance.now();
  const first = await turn(gateway, body, 3);
  const e2eMs = performance.now() - t0;
  // The client's next turn, as a chat client sends it: everything so far (the gateway's tool rounds
  // are not the client's to resend; the answer is), then its question.
  const messages = [...(body['messages'] as unknown[]), { role: 'assistant', content: first.content }, { role: 'user', content: 'Which quarters drive it?' }];
  const next = await turn(gateway, { ...body, scenario: 'replicas-follow-up', messages }, 1);
  return { mode, e2eMs, ttftMs: first.ttftMs, replicas: first.replicas, nextTurn: { ttftMs: next.ttftMs[0]!, replica: next.replicas[0]! } };
}

/** One request of a conversation, checked, with its rounds' TTFT and replicas from its timeline. */
async function turn(gateway: GatewayHandle, body: Record<string, unknown>, rounds: number): Promise<{ content: string; ttftMs: number[]; replicas: string[] }> {
  const res = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json()) as { conveyor?: { rounds: number }; choices?: Array<{ message: { content: string } }> };
  if (res.status !== 200 || answer.conveyor?.rounds !== rounds) throw new Error(`conversation failed (${res.status}): ${JSON.stringify(answer).slice(0, 300)}`);
  const timeline = gateway.timelines.get(res.headers.get('x-conveyor-request-id') ?? '');
  if (!timeline) throw new Error('no timeline for the conversation');
  const ttftMs: number[] = [];
  const replicas: string[] = [];
  let roundStart = 0;
  for (const e of timeline.events) {
    if (e.type === 'round-start') roundStart = e.t;
    else if (e.type === 'first-token') ttftMs.push(e.t - roundStart);
    else if (e.type === 'upstream-accepted') replicas.push(e.detail ?? '');
  }
  return { content: answer.choices?.[0]?.message.content ?? '', ttftMs, replicas };
}

async function warmTokenizers(sims: readonly SimProcess[], bodies: readonly Record<string, unknown>[]): Promise<void> {
  for (const sim of sims) {
    await inParallel(bodies, 4, async (body) => {
      const res = await fetch(`${sim.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, max_tokens: 1 }),
      });
      await res.arrayBuffer();
    });
  }
}

async function counters(sim: SimProcess): Promise<Counters> {
  return countersSchema.parse(await (await fetch(new URL('/sim/counters', sim.url))).json());
}

async function inParallel<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function summarizeMode(mode: AffinityMode, all: readonly ConversationRecord[], cache: { queries: number; hits: number }, replicaUrls: readonly string[]): ModeResult {
  const records = all.filter((r) => r.mode === mode);
  const rounds = records.flatMap((r) => r.replicas);
  return {
    mode,
    conversations: records.length,
    e2eMs: summarize(records.map((r) => r.e2eMs)),
    firstRoundTtftMs: summarize(records.map((r) => r.ttftMs[0]!)),
    laterRoundTtftMs: summarize(records.flatMap((r) => r.ttftMs.slice(1))),
    cacheHitRate: cache.queries === 0 ? NaN : cache.hits / cache.queries,
    prefilledTokensPerConversation: records.length === 0 ? NaN : (cache.queries - cache.hits) / records.length,
    oneReplicaShare: records.filter((r) => new Set(r.replicas).size === 1).length / records.length,
    nextTurnTtftMs: summarize(records.map((r) => r.nextTurn.ttftMs)),
    nextTurnSameReplicaShare: records.filter((r) => r.nextTurn.replica === r.replicas[0]).length / records.length,
    replicaShares: replicaUrls.map((url) => rounds.filter((r) => r === url).length / rounds.length),
  };
}
