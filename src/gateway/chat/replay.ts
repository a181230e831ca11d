/**
 * A chat completion from the response cache as the stream a streamed call expects (docs/api.md
 * "Response cache"): the stored `chat.completion` told as `chat.completion.chunk` events — per choice
 * its role, its text, its refusal, its tool calls by index, its finish — then the usage event when the
 * client asked for it, and `[DONE]`. Each piece is one event, as a provider sends when it has it whole.
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;

export interface ReplayOptions {
  /** The client asked for stream_options.include_usage. */
  usage: boolean;
  /** Events before [DONE] (request_breakdown). */
  last?: string;
}

export function replayAsStream(completion: Json, options: ReplayOptions): string {
  const head = {
    id: completion.id ?? null,
    object: 'chat.completion.chunk',
    created: completion.created ?? Math.floor(Date.now() / 1000),
    model: completion.model ?? null,
    ...(completion.system_fingerprint !== undefined ? { system_fingerprint: completion.system_fingerprint } : {}),
  };
  const chunk = (index: number, delta: Json, finish: unknown = null) =>
    event({ ...head, choices: [{ index, delta, logprobs: null, finish_reason: finish }] });
  let out = '';
  const choices = Array.isArray(completion.choices) ? completion.choices.filter(isObject) : [];
  for (const choice of choices) {
    const index = typeof choice.index === 'number' ? choice.index : 0;
    const message = isObject(choice.message) ? choice.message : {};
    out += chunk(index, { role: 'assistant', content: '', refusal: null });
    if (typeof message.content === 'string' && message.content !== '')
      out += chunk(index, { content: message.content });
    if (typeof message.refusal === 'string' && message.refusal !== '')
      out += chunk(index, { refusal: message.refusal });
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
    calls.forEach((call, i) => {
      const fn = isObject(call.function) ? call.function : {};
      out += chunk(index, {
        tool_calls: [
          {
            index: i,
            id: call.id,
            type: call.type ?? 'function',
            function: { name: fn.name, arguments: fn.arguments ?? '' },
          },
        ],
      });
    });
    out += chunk(index, {}, choice.finish_reason ?? 'stop');
  }
  if (options.usage && isObject(completion.usage)) out += event({ ...head, choices: [], usage: completion.usage });
  return `${out}${options.last ?? ''}data: [DONE]\n\n`;
}
