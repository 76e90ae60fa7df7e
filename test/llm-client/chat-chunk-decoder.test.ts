import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UpstreamProtocolError, UpstreamResponseError } from '../../core/errors.ts';
import { ChatChunkDecoder } from '../../llm-client/chat-chunk-decoder.ts';

const chunk = (body: Record<string, unknown>) => JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 7, model: 'm', ...body });

describe('ChatChunkDecoder', () => {
  it('emits start once, with the first chunk', () => {
    const decoder = new ChatChunkDecoder('asked');
    expect(decoder.decode(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }))).toEqual([
      { type: 'start', id: 'c1', model: 'm', created: 7 },
    ]);
    expect(decoder.decode(chunk({ choices: [{ index: 0, delta: { content: 'hi' } }] }))).toEqual([{ type: 'content', text: 'hi' }]);
  });

  it('orders usage, reasoning, content, tool-call deltas and finish within one chunk', () => {
    const decoder = new ChatChunkDecoder('asked');
    decoder.decode(chunk({ choices: [] }));
    const parts = decoder.decode(
      chunk({
        choices: [
          {
            index: 0,
            delta: {
              reasoning: 'r',
              content: 'c',
              tool_calls: [
                { index: 1, id: 'call_9', type: 'function', function: { name: 'search', arguments: '{"q"' } },
                { index: 2, function: { arguments: '' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 2 },
      }),
    );
    expect(parts).toEqual([
      { type: 'usage', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
      { type: 'reasoning', text: 'r', field: 'reasoning' },
      { type: 'content', text: 'c' },
      { type: 'tool-call-delta', index: 1, id: 'call_9', name: 'search', arguments: '{"q"' },
      { type: 'tool-call-delta', index: 2 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  // Gemini's OpenAI layer omits the index and sends parallel calls one a chunk, each whole with an
  // id of its own, and may split one call's arguments over index-less fragments without an id. Each
  // chunk's position, 0, made every call index 0: a consumer that keys calls by index, as the
  // OpenAI stream contract has it, joined them into one.
  it('gives each index-less call with an id of its own the next index, and index-less fragments without one to the call last opened', () => {
    const decoder = new ChatChunkDecoder('asked');
    const calls = (...tool_calls: Record<string, unknown>[]) => decoder.decode(chunk({ choices: [{ index: 0, delta: { tool_calls } }] })).filter((p) => p.type === 'tool-call-delta');
    expect(calls({ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } })).toEqual([{ type: 'tool-call-delta', index: 0, id: 'call_a', name: 'get_weather', arguments: '{"city":' }]);
    expect(calls({ function: { arguments: '"Paris"}' } })).toEqual([{ type: 'tool-call-delta', index: 0, arguments: '"Paris"}' }]);
    expect(calls({ id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } })).toEqual([
      { type: 'tool-call-delta', index: 1, id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ]);
    // Two side by side in one delta, and an id sent again with a later fragment of its own call.
    expect(calls({ id: 'call_c', function: { name: 'a', arguments: '{}' } }, { id: 'call_d', function: { name: 'b', arguments: '{' } })).toEqual([
      { type: 'tool-call-delta', index: 2, id: 'call_c', name: 'a', arguments: '{}' },
      { type: 'tool-call-delta', index: 3, id: 'call_d', name: 'b', arguments: '{' },
    ]);
    expect(calls({ id: 'call_d', function: { arguments: '}' } })).toEqual([{ type: 'tool-call-delta', index: 3, id: 'call_d', arguments: '}' }]);
    // A new id without a name is no new call: some servers change the id on every fragment.
    expect(calls({ id: 'frag_2', function: { arguments: ' ' } })).toEqual([{ type: 'tool-call-delta', index: 3, id: 'frag_2', arguments: ' ' }]);
  });

  it('reads the reasoning from `reasoning` when `reasoning_content` beside it is empty, and once when both carry it', () => {
    const decoder = new ChatChunkDecoder('asked');
    decoder.decode(chunk({ choices: [] }));
    expect(decoder.decode(chunk({ choices: [{ index: 0, delta: { reasoning_content: '', reasoning: 'think' } }] }))).toEqual([{ type: 'reasoning', text: 'think', field: 'reasoning' }]);
    expect(decoder.decode(chunk({ choices: [{ index: 0, delta: { reasoning_content: 'more', reasoning: 'more' } }] }))).toEqual([{ type: 'reasoning', text: 'more', field: 'reasoning' }]);
  });

  it("names the stop string that ended the decode, from vLLM's stop_reason and SGLang's matched_stop, and vLLM's stop token by its id", () => {
    const finish = (choice: Record<string, unknown>) => new ChatChunkDecoder('asked').decode(chunk({ choices: [{ index: 0, delta: { content: '' }, finish_reason: 'stop', ...choice }] })).at(-1);
    expect(finish({ stop_reason: '</answer>' })).toEqual({ type: 'finish', reason: 'stop', stopString: '</answer>' });
    // Before: SGLang's stop string was not read, so a decode its client's `stop` cut read as one the model ended.
    expect(finish({ matched_stop: '</answer>' })).toEqual({ type: 'finish', reason: 'stop', stopString: '</answer>' });
    // Before: vLLM's stop token id was dropped, so the gateway's answer had no stop_reason where vLLM's had it.
    expect(finish({ stop_reason: 128008 })).toEqual({ type: 'finish', reason: 'stop', stopTokenId: 128008 });
    expect(finish({ stop_reason: null })).toEqual({ type: 'finish', reason: 'stop' });
    // SGLang's id is any end token, its EOS included (FINISH_MATCHED_TOKEN).
    expect(finish({ matched_stop: 151645 })).toEqual({ type: 'finish', reason: 'stop' });
    expect(finish({ matched_stop: null })).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('falls back to the requested model and passes unknown fields over', () => {
    const parts = new ChatChunkDecoder('asked').decode(JSON.stringify({ choices: [], system_fingerprint: 'x', extra: { a: 1 } }));
    expect(parts[0]).toMatchObject({ type: 'start', id: '', model: 'asked' });
  });

  it('turns an in-stream error object into UpstreamResponseError with its message and code', () => {
    const decoder = new ChatChunkDecoder('m');
    const newer = () => decoder.decode(JSON.stringify({ error: { message: 'boom', type: 'BadRequestError', code: 400 } }));
    expect(newer).toThrow(UpstreamResponseError);
    expect(newer).toThrow('boom');
    try {
      newer();
    } catch (error) {
      expect((error as UpstreamResponseError).status).toBe(400);
    }
    const older = () => decoder.decode(JSON.stringify({ object: 'error', message: 'old style', code: 'x' }));
    expect(older).toThrow('old style');
    try {
      older();
    } catch (error) {
      expect((error as UpstreamResponseError).status).toBe(500);
    }
    expect(() => decoder.decode('overloaded', 'error')).toThrow(UpstreamResponseError);
  });

  it('decodes plain token chunks (hand-checked fast path) exactly as the schema path does', () => {
    const chunks = [
      { id: 'c1', created: 7, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] },
      { id: 'c1', choices: [{ index: 0, delta: { reasoning_content: 'think' }, finish_reason: null }] },
      { id: 'c1', choices: [{ index: 0, delta: { content: ' hello', reasoning: null }, stop_reason: null }] },
      { id: 'c1', choices: [{ index: 0, delta: null, finish_reason: 'stop' }] },
      { id: 'c1', choices: [] },
    ];
    const fast = new ChatChunkDecoder('m');
    const schema = new ChatChunkDecoder('m');
    for (const chunk of chunks) {
      // `tool_calls: []` takes the schema path and adds no parts: the same chunk, decoded the other way.
      const viaSchema = { ...chunk, choices: chunk.choices.map((c) => ({ ...c, delta: c.delta === null ? null : { ...c.delta, tool_calls: [] } })) };
      if (chunk.choices.length === 0) Object.assign(viaSchema, { usage: null, extra: 1 });
      expect(fast.decode(JSON.stringify(chunk))).toEqual(schema.decode(JSON.stringify(viaSchema)));
    }
  });

  it('reads usage on every chunk (continuous_usage_stats) as the schema does, and refuses a malformed one', () => {
    const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
    const token = { choices: [{ index: 0, delta: { content: ' x' }, logprobs: null, finish_reason: null }], usage };
    const fast = new ChatChunkDecoder('m');
    const schema = new ChatChunkDecoder('m');
    const viaSchema = { ...token, choices: [{ ...token.choices[0], delta: { content: ' x', tool_calls: [] } }] };
    expect(fast.decode(chunk(token))).toEqual(schema.decode(chunk(viaSchema)));
    expect(fast.decode(chunk(token)).slice(-2)).toEqual([{ type: 'usage', usage }, { type: 'content', text: ' x' }]);
    expect(fast.decode(chunk({ ...token, usage: { prompt_tokens: 12, completion_tokens: 4 } }))[0]).toEqual({ type: 'usage', usage: { ...usage, completion_tokens: 4, total_tokens: 16 } });
    expect(() => fast.decode(chunk({ ...token, usage: { prompt_tokens: -1, completion_tokens: 3 } }))).toThrow(UpstreamProtocolError);
    expect(() => fast.decode(chunk({ ...token, usage: { prompt_tokens: 12, completion_tokens: '3' } }))).toThrow(UpstreamProtocolError);
  });

  it("keeps the usage's details (vLLM's cached_tokens, a reasoning model's reasoning_tokens) on both paths, and drops a null one", () => {
    const usage = { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43, prompt_tokens_details: { cached_tokens: 32 }, completion_tokens_details: { reasoning_tokens: 2, note: 'x' } };
    const read = { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43, prompt_tokens_details: { cached_tokens: 32 }, completion_tokens_details: { reasoning_tokens: 2 } };
    const token = { choices: [{ index: 0, delta: { content: ' x' }, logprobs: null, finish_reason: null }], usage };
    // The token path (one content delta) and the schema's (the usage-only last chunk).
    expect(new ChatChunkDecoder('m').decode(chunk(token)).slice(-2)).toEqual([{ type: 'usage', usage: read }, { type: 'content', text: ' x' }]);
    expect(new ChatChunkDecoder('m').decode(chunk({ choices: [], usage })).slice(-1)).toEqual([{ type: 'usage', usage: read }]);
    const plain = { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 };
    expect(new ChatChunkDecoder('m').decode(chunk({ choices: [], usage: { ...plain, prompt_tokens_details: null } })).slice(-1)).toEqual([{ type: 'usage', usage: plain }]);
  });

  it('rejects data that is not a chunk', () => {
    const decoder = new ChatChunkDecoder('m');
    expect(() => decoder.decode('{"choices":')).toThrow(UpstreamProtocolError);
    expect(() => decoder.decode(JSON.stringify({ choices: [{ delta: { content: 5 } }] }))).toThrow(UpstreamProtocolError);
    expect(() => decoder.decode('[1,2]')).toThrow(UpstreamProtocolError);
  });

  describe('vLLM token chunks (decoded from their content string alone)', () => {
    // vLLM's serialisation: the fields it leaves unset are left out, logprobs and finish_reason kept.
    const vllmToken = (content: string, rest = ',"logprobs":null,"finish_reason":null') =>
      `{"id":"chatcmpl-5f","object":"chat.completion.chunk","created":1795724989,"model":"mistral-7b","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}${rest}}]}`;
    const started = () => {
      const decoder = new ChatChunkDecoder('asked');
      decoder.decode(vllmToken('', ',"logprobs":null,"finish_reason":null').replace('{"content":""}', '{"role":"assistant","content":""}'));
      return decoder;
    };

    it('gives what the whole parse gives, for any text', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary' }), (text) => {
          const data = vllmToken(text);
          const whole = new ChatChunkDecoder('asked').decode(data).filter((p) => p.type !== 'start');
          expect(started().decode(data)).toEqual(whole);
        }),
      );
    });

    it('leaves every other shape to the whole parse', () => {
      const decoder = started();
      expect(decoder.decode(vllmToken('x', ',"logprobs":null,"finish_reason":"stop","stop_reason":null'))).toEqual([
        { type: 'content', text: 'x' },
        { type: 'finish', reason: 'stop' },
      ]);
      // A middle that is more than one string: the same start and end around other fields.
      const smuggled = vllmToken('a').replace('"a"}', '"a","tool_calls":[{"index":0,"function":{"name":"f"}}]}');
      expect(decoder.decode(smuggled)).toEqual([{ type: 'content', text: 'a' }, { type: 'tool-call-delta', index: 0, name: 'f' }]);
      // Another stream's id (a proxy that joined two streams) is not this stream's start.
      expect(decoder.decode(vllmToken('b').replace('chatcmpl-5f', 'chatcmpl-60'))).toEqual([{ type: 'content', text: 'b' }]);
      expect(() => decoder.decode(vllmToken('c').replace('"c"', '"c'))).toThrow(UpstreamProtocolError);
    });
  });
});
