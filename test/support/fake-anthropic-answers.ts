/**
 * What the fake Anthropic (fake-anthropic.ts) answers to /v1/messages, as a script says: the whole
 * message, or the events of its stream, as Anthropic writes them.
 */
import type { StreamPacing } from './sse.js';

type Json = Record<string, unknown>;

/** One content block of a scripted answer; each array element is one streamed delta's piece. */
export type BlockScript =
  | { type: 'text'; text: string[] }
  | { type: 'thinking'; thinking: string[]; signature: string }
  | { type: 'redacted_thinking'; data: string }
  /** `input`: the pieces of the arguments' JSON text (partial_json), none for a tool without input. */
  | { type: 'tool_use'; id: string; name: string; input: string[] };

export interface AnthropicUsageScript {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  /** Of cache_creation_input_tokens, those written to the one-hour cache. */
  ephemeral_1h_input_tokens?: number;
}

/** What /v1/messages answers (JSON or streamed) until the next `message()` call. */
export interface MessageScript extends StreamPacing {
  content?: BlockScript[];
  usage?: AnthropicUsageScript;
  /** The model the answer names; default: the request's. */
  model?: string;
  /** Default: 'tool_use' when a block calls a tool, else 'end_turn'. */
  stopReason?: string;
  stopSequence?: string | null;
}

export const DEFAULT_TEXT = ['Hello', ', ', 'world', '!'];
export const DEFAULT_USAGE: AnthropicUsageScript = { input_tokens: 21, output_tokens: 6 };

/** One server-sent event as Anthropic names and writes it. */
export interface AnthropicEvent {
  event: string;
  data: string;
}

function blocksOf(script: MessageScript): BlockScript[] {
  return script.content ?? [{ type: 'text', text: DEFAULT_TEXT }];
}

function stopReasonOf(script: MessageScript): string {
  return script.stopReason ?? (blocksOf(script).some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
}

function usageObject(usage: AnthropicUsageScript, outputTokens = usage.output_tokens): Json {
  const creation = usage.cache_creation_input_tokens ?? 0;
  const forAnHour = usage.ephemeral_1h_input_tokens ?? 0;
  return {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: creation,
    cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: creation - forAnHour, ephemeral_1h_input_tokens: forAnHour },
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

function wholeBlock(block: BlockScript): Json {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text.join('') };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking.join(''), signature: block.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data };
    case 'tool_use': {
      const text = block.input.join('');
      return { type: 'tool_use', id: block.id, name: block.name, input: text === '' ? {} : JSON.parse(text) };
    }
  }
}

/** The whole answer, as Anthropic sends it when not streaming. */
export function messageFor(script: MessageScript, requestModel: string, id: string): Json {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: script.model ?? requestModel,
    content: blocksOf(script).map(wholeBlock),
    stop_reason: stopReasonOf(script),
    stop_sequence: script.stopSequence ?? null,
    usage: usageObject(script.usage ?? DEFAULT_USAGE),
  };
}

/**
 * The events of a streamed answer, in Anthropic's order: message_start (input usage, output 1), a ping,
 * then per block its start, its deltas and its stop, then message_delta (stop_reason and the usage so
 * far — cumulative: input and cache counts again, output the final count) and message_stop.
 */
export function messageEventsFor(script: MessageScript, requestModel: string, id: string): AnthropicEvent[] {
  const usage = script.usage ?? DEFAULT_USAGE;
  const events: AnthropicEvent[] = [];
  const add = (event: string, data: Json) => events.push({ event, data: JSON.stringify({ type: event, ...data }) });
  add('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: script.model ?? requestModel,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usageObject(usage, 1),
    },
  });
  add('ping', {});
  blocksOf(script).forEach((block, index) => {
    const delta = (d: Json) => add('content_block_delta', { index, delta: d });
    switch (block.type) {
      case 'text':
        add('content_block_start', { index, content_block: { type: 'text', text: '' } });
        for (const text of block.text) delta({ type: 'text_delta', text });
        break;
      case 'thinking':
        add('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        for (const thinking of block.thinking) delta({ type: 'thinking_delta', thinking });
        delta({ type: 'signature_delta', signature: block.signature });
        break;
      case 'redacted_thinking':
        add('content_block_start', { index, content_block: { type: 'redacted_thinking', data: block.data } });
        break;
      case 'tool_use':
        add('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        for (const partial_json of block.input) delta({ type: 'input_json_delta', partial_json });
        break;
    }
    add('content_block_stop', { index });
  });
  const final = usageObject(usage);
  delete final.cache_creation;
  delete final.service_tier;
  add('message_delta', {
    delta: { stop_reason: stopReasonOf(script), stop_sequence: script.stopSequence ?? null },
    usage: final,
  });
  add('message_stop', {});
  return events;
}
