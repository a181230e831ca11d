/**
 * An Anthropic message from the response cache as the stream a streamed Messages call expects
 * (docs/api.md "Response cache"): `message_start` (the message as it began: no content, no stop
 * reason, its input counts), then per content block its `content_block_start`, its deltas — a text's
 * citations and text, a thinking's text and signature, a tool call's input as one `input_json_delta` —
 * and its `content_block_stop`, then `message_delta` (the stop reason and the final usage, cumulative
 * as Anthropic's are) and `message_stop`. Each piece is one event, as Anthropic sends when it has it
 * whole; Anthropic's clients put the same message back together from them.
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const event = (type: string, fields: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

/** The usage counts message_delta repeats (Anthropic's clients overwrite theirs with each one present). */
const DELTA_USAGE = [
  'input_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'output_tokens',
  'server_tool_use',
  'output_tokens_details',
];
/** What message_delta says of the message's end; the rest of the message is message_start's. */
const DELTA_FIELDS = ['stop_reason', 'stop_sequence', 'stop_details', 'container'];

export interface MessageReplayOptions {
  /** Events written just before message_stop (request_breakdown), as they are. */
  last?: string;
}

export function replayMessageAsStream(message: Json, options: MessageReplayOptions = {}): string {
  const usage = isObject(message.usage) ? message.usage : {};
  const begun: Json = { ...message, content: [], stop_reason: null, stop_sequence: null };
  if ('stop_details' in message) begun.stop_details = null;
  // The input counts are known from the start; output comes as the message does.
  begun.usage = { ...usage, output_tokens: 0 };
  let out = event('message_start', { message: begun });
  const blocks = Array.isArray(message.content) ? message.content : [];
  blocks.forEach((block, index) => {
    if (isObject(block)) out += blockEvents(block, index);
  });
  const delta: Json = {};
  for (const field of DELTA_FIELDS) if (field in message) delta[field] = message[field];
  const finalUsage: Json = {};
  for (const field of DELTA_USAGE) if (usage[field] !== undefined) finalUsage[field] = usage[field];
  out += event('message_delta', { delta, usage: finalUsage });
  return `${out}${options.last ?? ''}${event('message_stop', {})}`;
}

/** One content block: its start (as it began), its deltas, its stop. */
function blockEvents(block: Json, index: number): string {
  const start = (content_block: Json) => event('content_block_start', { index, content_block });
  const delta = (d: Json) => event('content_block_delta', { index, delta: d });
  let out = '';
  switch (block.type) {
    case 'text': {
      const citations = Array.isArray(block.citations) ? block.citations : null;
      out += start({ ...block, text: '', ...(citations !== null ? { citations: [] } : {}) });
      for (const citation of citations ?? []) out += delta({ type: 'citations_delta', citation });
      if (typeof block.text === 'string' && block.text !== '') out += delta({ type: 'text_delta', text: block.text });
      break;
    }
    case 'thinking':
      out += start({ ...block, thinking: '', signature: '' });
      if (typeof block.thinking === 'string' && block.thinking !== '')
        out += delta({ type: 'thinking_delta', thinking: block.thinking });
      if (typeof block.signature === 'string') out += delta({ type: 'signature_delta', signature: block.signature });
      break;
    case 'tool_use':
    case 'server_tool_use':
      out += start({ ...block, input: {} });
      out += delta({ type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) });
      break;
    default:
      // A redacted thinking, a server tool's result, or a kind added later: whole in its start.
      out += start(block);
  }
  return out + event('content_block_stop', { index });
}
