import { loadScenarioDir, parseScenario, type LoadedScenario } from './scenario-loader.ts';
import { chooseReply, type ChatMessageLike, type ScenarioReply } from './scenario-matcher.ts';
import type { Scenario } from './scenario-schema.ts';

/** Prefix of the model names that select one scenario (`sim-sine-wave`). */
export const SCENARIO_MODEL_PREFIX = 'sim-';

/**
 * All scenarios a server knows, in the order their rules are tried: in-memory ones first, then
 * each directory's files in name order. A later scenario with an already-used name is dropped,
 * so an in-memory scenario can replace a shipped one.
 */
export class ScenarioSet {
  private readonly byName = new Map<string, LoadedScenario>();
  readonly scenarios: readonly LoadedScenario[];

  constructor(scenarios: readonly LoadedScenario[]) {
    for (const scenario of scenarios) {
      if (!this.byName.has(scenario.name)) this.byName.set(scenario.name, scenario);
    }
    this.scenarios = [...this.byName.values()];
  }

  static load(options: { inMemory?: readonly Scenario[]; dirs?: readonly string[] }): ScenarioSet {
    const inMemory = (options.inMemory ?? []).map((s, i) => parseScenario(s, `in-memory scenario #${i}`));
    const fromDirs = (options.dirs ?? []).flatMap((dir) => loadScenarioDir(dir));
    return new ScenarioSet([...inMemory, ...fromDirs]);
  }

  get(name: string): LoadedScenario | undefined {
    return this.byName.get(name);
  }

  /** The scenario a model name selects, if it is `sim-<known scenario>`. */
  forModel(model: string): LoadedScenario | undefined {
    return model.startsWith(SCENARIO_MODEL_PREFIX) ? this.get(model.slice(SCENARIO_MODEL_PREFIX.length)) : undefined;
  }

  /** The reply for a conversation: only `selected`'s rules when given, else every scenario's. */
  reply(messages: readonly ChatMessageLike[], selected?: LoadedScenario): ScenarioReply {
    return selected ? chooseReply([selected], messages, true) : chooseReply(this.scenarios, messages);
  }
}
