/**
 * A streamed Anthropic message put back together, event by event, for its log: `message_start`'s
 * message, each content block by its `index` (text, tool input JSON, thinking and its signature,
 * citations), `message_delta`'s stop reason and usage. Usage counts are cumulative in every event that
 * carries them: a later count replaces an earlier one, never adds to it. The texts the log keeps are
 * capped (GATELOG_LOG_MAX_BYTES), all of them together however many blocks there are: the client's
 * stream is not, the log's copy is.
 */
import { AnswerTexts, type Capped } from '../../logs/capped-text.js';

type Json = Record<string, unknown>;

interface BlockParts {
  /** The block as content_block_start gave it. */
  start: Json;
  text: Capped | null;
  thinking: Capped | null;
  /** A tool_use block's input, as the JSON text its deltas carry. */
  inputJson: Capped | null;
  signature: string | undefined;
  citations: unknown[] | null;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export class AnthropicAssembler {
  /** message_start's message (its content and usage are kept apart). */
  private base: Json | null = null;
  private readonly blocks = new Map<number, BlockParts>();
  private usage: Json | null = null;
  private stopReason: unknown = null;
  private stopSequence: unknown = null;
  /** message_delta's other news of the message's end (stop_details, container). */
  private endFields: Json = {};
  /** performance.now() of the first event carrying output: text, thinking or a tool call. */
  firstOutputAt: number | null = null;
  /** message_delta arrived: output_tokens is the final count. */
  outputCounted = false;
  /** message_stop arrived. */
  finished = false;

  private readonly texts: AnswerTexts;

  constructor(maxChars: number) {
    this.texts = new AnswerTexts(maxChars);
  }

  /** Some text was longer than the log keeps: message() is not the whole answer. */
  get cut(): boolean {
    return this.texts.cut;
  }

  get model(): string | undefined {
    return typeof this.base?.model === 'string' ? this.base.model : undefined;
  }

  get id(): string | undefined {
    return typeof this.base?.id === 'string' ? this.base.id : undefined;
  }

  /** message_start arrived (its usage holds the input counts). */
  get started(): boolean {
    return this.base !== null;
  }

  /** One event's data (its `type` names it). */
  add(event: Json, now: number): void {
    switch (event.type) {
      case 'message_start': {
        if (!isObject(event.message)) return;
        const { content: _content, usage, ...base } = event.message;
        this.base = base;
        if (isObject(usage)) this.usage = { ...usage };
        return;
      }
      case 'content_block_start': {
        if (typeof event.index !== 'number' || !isObject(event.content_block)) return;
        const start = event.content_block;
        const parts: BlockParts = {
          start,
          text: null,
          thinking: null,
          inputJson: null,
          signature: undefined,
          citations: null,
        };
        if (typeof start.text === 'string') (parts.text = this.texts.text()).add(start.text);
        if (typeof start.thinking === 'string') (parts.thinking = this.texts.text()).add(start.thinking);
        this.blocks.set(event.index, parts);
        // A tool call's name is output, as the first tool-call delta of a chat completion is.
        if (start.type === 'tool_use') this.firstOutputAt ??= now;
        return;
      }
      case 'content_block_delta':
        this.addDelta(event, now);
        return;
      case 'message_delta': {
        const delta = isObject(event.delta) ? event.delta : {};
        for (const [key, value] of Object.entries(delta)) {
          if (key === 'stop_reason') this.stopReason = value;
          else if (key === 'stop_sequence') this.stopSequence = value;
          else this.endFields[key] = value;
        }
        if (isObject(event.usage)) {
          this.usage ??= {};
          for (const [key, value] of Object.entries(event.usage)) if (value !== null) this.usage[key] = value;
          this.outputCounted = true;
        }
        return;
      }
      case 'message_stop':
        this.finished = true;
        return;
      default:
        // ping, and events Anthropic may add: nothing to keep.
        return;
    }
  }

  private addDelta(event: Json, now: number): void {
    const delta = event.delta;
    if (typeof event.index !== 'number' || !isObject(delta)) return;
    const parts = this.blocks.get(event.index);
    if (parts === undefined) return;
    let output = false;
    if (delta.type === 'text_delta' && typeof delta.text === 'string') {
      (parts.text ??= this.texts.text()).add(delta.text);
      output = delta.text !== '';
    } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
      (parts.inputJson ??= this.texts.text()).add(delta.partial_json);
      output = delta.partial_json !== '';
    } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
      (parts.thinking ??= this.texts.text()).add(delta.thinking);
      output = delta.thinking !== '';
    } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') {
      parts.signature = delta.signature;
    } else if (delta.type === 'citations_delta' && delta.citation !== undefined) {
      (parts.citations ??= []).push(delta.citation);
    }
    if (output) this.firstOutputAt ??= now;
  }

  /** The content blocks in index order, each as a message that was not streamed holds it. */
  private content(): Json[] {
    return [...this.blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, parts]) => {
        const block: Json = { ...parts.start };
        if (parts.text !== null) block.text = parts.text.text();
        if (parts.thinking !== null) block.thinking = parts.thinking.text();
        if (parts.signature !== undefined) block.signature = parts.signature;
        if (parts.citations !== null) {
          block.citations = [...(Array.isArray(block.citations) ? block.citations : []), ...parts.citations];
        }
        if (parts.inputJson !== null) block.input = parsedInput(parts.inputJson.text());
        return block;
      });
  }

  /** The whole message as a call that was not streamed would have had it (as far as it arrived). */
  message(): Json {
    return {
      ...(this.base ?? { type: 'message', role: 'assistant' }),
      content: this.content(),
      stop_reason: this.stopReason,
      stop_sequence: this.stopSequence,
      ...this.endFields,
      usage: this.usage,
    };
  }

  /** The usage so far: message_start's counts, overwritten by message_delta's. */
  get usageSoFar(): Json | null {
    return this.usage;
  }
}

/** A tool call's input from its JSON text; the text itself when it is not whole JSON (cut short, or capped). */
function parsedInput(text: string): unknown {
  if (text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
