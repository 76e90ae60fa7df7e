import type { LoadedScenario } from './scenario-loader.ts';
import { templateVariablePattern, type ScenarioRule, type TemplateVariable, type TextMatch } from './scenario-schema.ts';

/** Any chat message; only role and content matter here. */
export interface ChatMessageLike {
  role: string;
  content?: unknown;
}

/** What the rules look at, computed once per request. */
export interface ConversationFacts {
  lastUser: string;
  /** 1 + the number of assistant messages after the last user message. */
  round: number;
  lastRole: string | null;
  /** Content of the last tool message ('' when there is none). */
  toolOutput: string;
}

export interface ScenarioReply {
  text: string;
  /** null when no rule matched and the default reply was used. */
  scenario: string | null;
  ruleIndex: number | null;
}

/** Used when no rule matches; documented in sim/README.md. */
export const DEFAULT_REPLY = 'This is the simulator. No scenario matched this conversation, so here is the default reply.';

/** Text of a message's content: a string, or the text parts of a content array joined by "\n". */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      part !== null && typeof part === 'object' && 'text' in part && typeof part.text === 'string' ? part.text : '',
    )
    .filter((text) => text.length > 0)
    .join('\n');
}

export function conversationFacts(messages: readonly ChatMessageLike[]): ConversationFacts {
  let lastUserIndex = -1;
  let toolOutput = '';
  messages.forEach((m, i) => {
    if (m.role === 'user') lastUserIndex = i;
    if (m.role === 'tool') toolOutput = contentText(m.content);
  });
  const assistantsAfter = messages.slice(lastUserIndex + 1).filter((m) => m.role === 'assistant').length;
  return {
    lastUser: lastUserIndex >= 0 ? contentText(messages[lastUserIndex]!.content) : '',
    round: 1 + assistantsAfter,
    lastRole: messages.at(-1)?.role ?? null,
    toolOutput,
  };
}

function textMatches(match: TextMatch, text: string): boolean {
  if (typeof match === 'string') return text.toLowerCase().includes(match.toLowerCase());
  if ('contains' in match) {
    return match.caseSensitive ? text.includes(match.contains) : text.toLowerCase().includes(match.contains.toLowerCase());
  }
  return new RegExp(match.regex, match.flags).test(text);
}

/** `explicit`: the request named the scenario these rules belong to. */
export function ruleMatches(rule: ScenarioRule, facts: ConversationFacts, explicit = false): boolean {
  const { lastUser, round, lastRole } = rule.when;
  if (rule.when.explicit === true && !explicit) return false;
  if (lastUser !== undefined && !textMatches(lastUser, facts.lastUser)) return false;
  if (typeof round === 'number' && facts.round !== round) return false;
  if (typeof round === 'object') {
    if (round.min !== undefined && facts.round < round.min) return false;
    if (round.max !== undefined && facts.round > round.max) return false;
  }
  if (lastRole !== undefined && facts.lastRole !== lastRole) return false;
  return true;
}

function lastObservation(toolOutput: string): string {
  const at = toolOutput.lastIndexOf('Observation: ');
  return (at < 0 ? toolOutput.trimEnd().split('\n').at(-1) ?? '' : toolOutput.slice(at + 'Observation: '.length).split('\n')[0]!).trim();
}

export function renderReply(template: string, facts: ConversationFacts): string {
  const values: Record<TemplateVariable, string> = {
    tool_output: facts.toolOutput,
    // The conclusion of a long observation (a plan's last step, a search's count line), for replies that answer briefly.
    tool_output_last_line: facts.toolOutput.trimEnd().split('\n').at(-1) ?? '',
    // What the last "Observation:" of a plan transcript says (an LLMCompiler joiner quotes it).
    tool_output_last_observation: lastObservation(facts.toolOutput),
    last_user: facts.lastUser,
    round: String(facts.round),
  };
  // The schema rejected unknown names, so every match has a value.
  return template.replace(templateVariablePattern(), (_, name: string) => values[name as TemplateVariable]);
}

/**
 * The first matching rule of `scenarios`, tried in order, rule by rule; the default reply when
 * none matches. `explicit`: the request named the (single) scenario passed.
 */
export function chooseReply(
  scenarios: readonly LoadedScenario[],
  messages: readonly ChatMessageLike[],
  explicit = false,
): ScenarioReply {
  const facts = conversationFacts(messages);
  for (const scenario of scenarios) {
    const ruleIndex = scenario.rules.findIndex((rule) => ruleMatches(rule, facts, explicit));
    if (ruleIndex >= 0) {
      return { text: renderReply(scenario.rules[ruleIndex]!.reply, facts), scenario: scenario.name, ruleIndex };
    }
  }
  return { text: DEFAULT_REPLY, scenario: null, ruleIndex: null };
}
