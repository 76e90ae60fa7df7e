import { InvalidRequestError } from '../core/errors.ts';
import { BOS_TOKEN_ID, encodeText, tokenBytes, VOCAB_SIZE } from './mistral-tokenizer.ts';

/**
 * A text prompt's token ids (/v1/completions, /tokenize): BOS first unless `addSpecialTokens` is
 * false, as vLLM's tokenizer encodes it for Mistral. SentencePiece (and the Metaspace
 * pre-tokenizer of HF's Llama-style tokenizers) adds a space before the text, so "Plot" is one
 * token, `▁Plot`, not `Pl` `ot`: without it, prompt_tokens and /tokenize's ids were off from
 * vLLM's by a token or two. A reply is encoded without it (`encodeText`): it continues a prompt.
 */
export function textPromptTokenIds(text: string, addSpecialTokens = true): number[] {
  const ids = text === '' ? [] : encodeText(` ${text}`);
  return addSpecialTokens ? [BOS_TOKEN_ID, ...ids] : [...ids];
}

/**
 * The text of token ids a client sent (/v1/completions' prompt, /detokenize), special tokens
 * written out (`<s>`). An id past the vocabulary is the client's mistake, a 400 in vLLM's words
 * naming `param`.
 */
export function decodeClientTokenIds(tokenIds: readonly number[], param: string): string {
  const maxId = tokenIds.reduce((max, id) => Math.max(max, id), 0);
  if (maxId >= VOCAB_SIZE) throw new InvalidRequestError(`Token id ${maxId} is out of vocabulary`, param);
  return Buffer.concat(tokenIds.map((id) => tokenBytes(id))).toString('utf8');
}
