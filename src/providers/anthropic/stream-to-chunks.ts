/**
 * A Claude event stream as an OpenAI chat-completion stream, one Anthropic event at a time (as the
 * stream pipeline's parser hands them over): each returns the `data: …` events to send, with the chunk
 * each holds, so that the chat route's ChatAssembler can be fed them unchanged.
 *
 * - message_start → the first chunk (role, empty content); its id, model and input usage are kept.
 * - text → `content`; thinking → `reasoning_content`; a signature is kept for the log only.
 * - Tool calls are numbered from 0 in the order their blocks start (Anthropic's block index counts the
 *   text and thinking blocks too): the first chunk of a call carries its id, type and name, the next
 *   ones only argument pieces. A call whose arguments never arrived gets "{}" when its block stops.
 * - message_delta → the finish_reason chunk. Its usage is cumulative: counts it carries replace the
 *   ones message_start gave (never added to them).
 * - message_stop → the usage-only chunk (`choices: []`, always made: gatelog's log reads it; marked
 *   hidden when the client did not ask for include_usage), then `[DONE]`.
 * - ping → nothing. An in-band `error` event → an OpenAI error event, then nothing: no finish_reason,
 *   no [DONE], and the call is a failed one. A stream that ends before message_stop is failed too.
 */
import { AppError } from '../../errors.js';
import { type ChatError, chatErrorOf } from './errors-to-chat.js';
import { finishReasonOf } from './messages-to-chat.js';
import { type ChatStreamTranslator, DONE_EVENT, type TranslatedEvent } from '../chat-translation.js';
import type { TokenUsage } from '../usage.js';
import { type AnthropicCounts, chatCounts, openAIUsage, readCounts, tokenUsageOf } from './usage.js';

type Json = Record<string, unknown>;

export interface StreamTranslatorOptions {
  /** The client asked for the usage event (stream_options.include_usage). */
  includeUsage: boolean;
  /** Epoch ms, for the chunks' `created`. */
  now?: () => number;
  /** Thinking text kept for the log, at most (GATELOG_LOG_MAX_BYTES); the client's stream is not cut. */
  maxLoggedChars?: number;
}

/** A reasoning block of the answer, as messages-to-chat.ts gives it out in `thinking_blocks`. */
export type ThinkingBlock =
  { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

type BlockState =
  | { kind: 'tool'; call: number; argumentsSent: boolean; startInput: unknown }
  | { kind: 'thinking'; block: { type: 'thinking'; thinking: string; signature: string } }
  | { kind: 'other' };

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const dataEvent = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

export class AnthropicStreamTranslator implements ChatStreamTranslator {
  id = '';
  model = '';
  created: number;
  /** Anthropic's counts, as the latest event that carried them left them. */
  private counts: AnthropicCounts = {};
  /** message_stop arrived: the answer is whole. */
  completed = false;
  /** The error the stream ended with (an in-band event, or the stream cut before message_stop). */
  error: ChatError['error'] | null = null;
  /** Anthropic's own stop_reason, from message_delta. */
  stopReason: string | null = null;
  /** Thinking and redacted-thinking blocks, signatures included, for the log. */
  readonly thinkingBlocks: ThinkingBlock[] = [];
  private readonly blocks = new Map<number, BlockState>();
  private toolCalls = 0;
  private loggedChars = 0;
  private readonly includeUsage: boolean;
  private readonly maxLoggedChars: number;

  constructor(options: StreamTranslatorOptions) {
    this.includeUsage = options.includeUsage;
    this.maxLoggedChars = options.maxLoggedChars ?? Number.POSITIVE_INFINITY;
    this.created = Math.floor((options.now ?? Date.now)() / 1000);
  }

  /** The counts so far, as the usage chunk tells them (with the one-hour cache writes it cannot). */
  get usage(): TokenUsage {
    return chatCounts(tokenUsageOf(this.counts));
  }

  /** Over: the answer is whole, or failed. */
  get over(): boolean {
    return this.completed || this.error !== null;
  }

  /**
   * One event of Anthropic's stream. Throws an AppError (502) for an event that is not JSON: the stream
   * cannot be read on.
   */
  event(message: { event?: string; data: string }): TranslatedEvent[] {
    if (this.over) return [];
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      throw new AppError(502, 'upstream_invalid_response', 'The provider sent an event that is not JSON.');
    }
    if (!isObject(data)) {
      throw new AppError(502, 'upstream_invalid_response', 'The provider sent an event that is not an object.');
    }
    const type = typeof data.type === 'string' ? data.type : message.event;
    switch (type) {
      case 'message_start':
        return this.start(data);
      case 'content_block_start':
        return this.blockStart(data);
      case 'content_block_delta':
        return this.blockDelta(data);
      case 'content_block_stop':
        return this.blockStop(data);
      case 'message_delta':
        return this.messageDelta(data);
      case 'message_stop':
        return this.stop();
      case 'error':
        return this.fail(chatErrorOf(data).error);
      default:
        // ping, and event types Anthropic may add (its documented promise): nothing to send.
        return [];
    }
  }

  /**
   * The provider's stream ended (its connection closed in good order). Before message_stop, the call
   * failed: an error event for the client (no [DONE]). After it, nothing.
   */
  end(): TranslatedEvent[] {
    if (this.over) return [];
    return this.fail({
      message: 'The provider ended its stream before its last event.',
      type: 'upstream_error',
      param: null,
      code: 'stream_interrupted',
    });
  }

  /** The thinking text of the answer, joined (null when Claude did not think aloud). */
  get reasoningContent(): string | null {
    const texts = this.thinkingBlocks.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : []));
    return this.thinkingBlocks.length === 0 ? null : texts.join('');
  }

  private chunk(delta: Json, finishReason: string | null = null): TranslatedEvent {
    const chunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    return { text: dataEvent(chunk), chunk, hidden: false };
  }

  private start(data: Json): TranslatedEvent[] {
    const message = isObject(data.message) ? data.message : {};
    if (typeof message.id === 'string') this.id = message.id;
    if (typeof message.model === 'string') this.model = message.model;
    this.counts = readCounts(message.usage, this.counts);
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  private blockStart(data: Json): TranslatedEvent[] {
    const index = typeof data.index === 'number' ? data.index : this.blocks.size;
    const block = isObject(data.content_block) ? data.content_block : {};
    if (block.type === 'tool_use') {
      const call = this.toolCalls++;
      this.blocks.set(index, { kind: 'tool', call, argumentsSent: false, startInput: block.input });
      return [
        this.chunk({
          tool_calls: [{ index: call, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }],
        }),
      ];
    }
    if (block.type === 'thinking') {
      const kept = { type: 'thinking' as const, thinking: '', signature: '' };
      this.thinkingBlocks.push(kept);
      this.blocks.set(index, { kind: 'thinking', block: kept });
      return this.thinking(kept, block.thinking);
    }
    if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      this.thinkingBlocks.push({ type: 'redacted_thinking', data: block.data });
    }
    this.blocks.set(index, { kind: 'other' });
    // A text block starts empty; should it not, its text is the answer's all the same.
    if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
      return [this.chunk({ content: block.text })];
    }
    return [];
  }

  private blockDelta(data: Json): TranslatedEvent[] {
    const state = typeof data.index === 'number' ? this.blocks.get(data.index) : undefined;
    const delta = isObject(data.delta) ? data.delta : {};
    switch (delta.type) {
      case 'text_delta':
        return typeof delta.text === 'string' && delta.text !== '' ? [this.chunk({ content: delta.text })] : [];
      case 'input_json_delta': {
        const piece = delta.partial_json;
        if (state?.kind !== 'tool' || typeof piece !== 'string' || piece === '') return [];
        state.argumentsSent = true;
        return [this.chunk({ tool_calls: [{ index: state.call, function: { arguments: piece } }] })];
      }
      case 'thinking_delta':
        return state?.kind === 'thinking' ? this.thinking(state.block, delta.thinking) : [];
      case 'signature_delta':
        if (state?.kind === 'thinking' && typeof delta.signature === 'string') state.block.signature += delta.signature;
        return [];
      default:
        return []; // citations_delta and later kinds: nothing an OpenAI client reads
    }
  }

  /** Thinking text: to the client as reasoning_content, to the log up to its limit. */
  private thinking(block: { thinking: string }, text: unknown): TranslatedEvent[] {
    if (typeof text !== 'string' || text === '') return [];
    const room = this.maxLoggedChars - this.loggedChars;
    if (room > 0) {
      const kept = text.length <= room ? text : text.slice(0, room);
      block.thinking += kept;
      this.loggedChars += kept.length;
    }
    return [this.chunk({ reasoning_content: text })];
  }

  private blockStop(data: Json): TranslatedEvent[] {
    const state = typeof data.index === 'number' ? this.blocks.get(data.index) : undefined;
    if (state?.kind !== 'tool' || state.argumentsSent) return [];
    state.argumentsSent = true;
    // No argument deltas: a tool without parameters. Its arguments are still a JSON object.
    const start = state.startInput;
    const args = isObject(start) && Object.keys(start).length > 0 ? JSON.stringify(start) : '{}';
    return [this.chunk({ tool_calls: [{ index: state.call, function: { arguments: args } }] })];
  }

  private messageDelta(data: Json): TranslatedEvent[] {
    this.counts = readCounts(data.usage, this.counts);
    const delta = isObject(data.delta) ? data.delta : {};
    if (typeof delta.stop_reason === 'string') this.stopReason = delta.stop_reason;
    return [this.chunk({}, finishReasonOf(delta.stop_reason))];
  }

  private stop(): TranslatedEvent[] {
    this.completed = true;
    const chunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [],
      usage: openAIUsage(this.usage),
    };
    return [
      { text: dataEvent(chunk), chunk, hidden: !this.includeUsage },
      { text: DONE_EVENT, chunk: null, hidden: false },
    ];
  }

  private fail(error: ChatError['error']): TranslatedEvent[] {
    this.error = error;
    return [{ text: dataEvent({ error }), chunk: null, hidden: false }];
  }
}
