import { InvalidRequestError } from '../core/errors.ts';

/**
 * The content part types vLLM's chat_utils parses (its MM_PARSER_MAP and the parts it skips when
 * empty), as its refusal of any other lists them. A text-only model here takes the media ones
 * and reads only their text, as the simulator reads every part.
 */
const SUPPORTED = [
  'audio_embeds',
  'audio_url',
  'image_embeds',
  'image_pil',
  'image_url',
  'input_audio',
  'input_image',
  'input_text',
  'output_text',
  'prompt_embeds',
  'refusal',
  'text',
  'thinking',
  'tool_reference',
  'video_url',
];
const KNOWN = new Set(SUPPORTED);

/**
 * A content part of another type (OpenAI's `file`, an Anthropic `tool_use` block) is refused as
 * vLLM refuses it, with a 400 on param `type`, when the chat template is rendered: before that
 * (vLLM before 0.11) it was a 501.
 */
export function checkContentPartTypes(messages: ReadonlyArray<{ content?: unknown }>): void {
  for (const { content } of messages) {
    if (!Array.isArray(content)) continue;
    for (const part of content as Array<{ type?: unknown }>) {
      const type = part?.type;
      if (typeof type === 'string' && !KNOWN.has(type)) {
        throw new InvalidRequestError(`Unsupported chat content part type: '${type}'. Supported types: ${SUPPORTED.join(', ')}`, 'type');
      }
    }
  }
}
