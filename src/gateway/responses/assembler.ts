/**
 * A streamed response put back together, event by event, for its log. The provider's last event
 * (`response.completed`, `response.incomplete` or `response.failed`) carries the whole response, usage
 * included: that is the log's output. A stream cut off before it leaves what its events said so far:
 * the response as created, with each output item by its `output_index` — the item as done, or as its
 * text, refusal and function-call argument deltas built it. The texts the log keeps are capped
 * (GATELOG_LOG_MAX_BYTES), the deltas' all together: the client's stream is not, the log's copy is.
 */
import { AnswerTexts, type Capped, capText } from '../../logs/capped-text.js';

type Json = Record<string, unknown>;

/** The events that end a response's stream, each with the whole response. */
export const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** The events that carry the response as it stands, before its end. */
const SNAPSHOT_EVENTS = new Set(['response.created', 'response.queued', 'response.in_progress']);

interface ItemParts {
  /** The item as the provider announced it (response.output_item.added). */
  added: Json;
  /** The item whole (response.output_item.done), once it is. */
  done: Json | null;
  /** A message's content parts by content_index, each with its text so far. */
  parts: Map<number, { part: Json; text: Capped }>;
  /** A function call's arguments so far. */
  arguments: Capped | null;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const indexOf = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0);

export class ResponseAssembler {
  /** The response as the provider last described it before its end (id, model, created_at). */
  private snapshot: Json | null = null;
  /** The response whole, from the stream's last event. */
  private final: Json | null = null;
  /** The type of the stream's last event, once it came. */
  terminal: string | null = null;
  /** performance.now() of the first event carrying output text, a refusal or function-call arguments. */
  firstOutputAt: number | null = null;
  private readonly items = new Map<number, ItemParts>();

  /** The deltas' texts, capped together. */
  private readonly texts: AnswerTexts;

  constructor(private readonly maxChars: number) {
    this.texts = new AnswerTexts(maxChars);
  }

  /** One event of the stream, parsed. */
  add(event: Json, now: number): void {
    const type = event.type;
    if (typeof type !== 'string') return;
    if (SNAPSHOT_EVENTS.has(type) || TERMINAL_EVENTS.has(type)) {
      if (!isObject(event.response)) return;
      if (TERMINAL_EVENTS.has(type)) {
        this.final = event.response;
        this.terminal = type;
      } else {
        this.snapshot = event.response;
      }
      return;
    }
    switch (type) {
      case 'response.output_item.added':
        if (isObject(event.item)) {
          this.items.set(indexOf(event.output_index), {
            added: event.item,
            done: null,
            parts: new Map(),
            arguments: null,
          });
        }
        return;
      case 'response.output_item.done': {
        const item = this.items.get(indexOf(event.output_index));
        if (item && isObject(event.item)) item.done = event.item;
        return;
      }
      case 'response.content_part.added': {
        const item = this.items.get(indexOf(event.output_index));
        if (item && isObject(event.part)) {
          item.parts.set(indexOf(event.content_index), {
            part: event.part,
            text: this.texts.text(),
          });
        }
        return;
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const part = this.items.get(indexOf(event.output_index))?.parts.get(indexOf(event.content_index));
        if (typeof event.delta !== 'string' || event.delta === '') return;
        part?.text.add(event.delta);
        this.firstOutputAt ??= now;
        return;
      }
      case 'response.function_call_arguments.delta': {
        const item = this.items.get(indexOf(event.output_index));
        if (typeof event.delta !== 'string' || event.delta === '') return;
        if (item) (item.arguments ??= this.texts.text()).add(event.delta);
        this.firstOutputAt ??= now;
        return;
      }
      default:
        return;
    }
  }

  /** The response whole, as the provider ended its stream with it; null before that. */
  get finalResponse(): Json | null {
    return this.final;
  }

  /** The response as the log keeps it: the whole one, else what the stream said so far. */
  response(): Json {
    if (this.final !== null) return capResponse(this.final, this.maxChars);
    const output = [...this.items.entries()].sort(([a], [b]) => a - b).map(([, item]) => this.itemSoFar(item));
    return { ...(this.snapshot ?? { object: 'response' }), output, usage: null };
  }

  private itemSoFar(item: ItemParts): Json {
    if (item.done !== null) return capItem(item.done, this.maxChars);
    if (item.added.type === 'function_call') return { ...item.added, arguments: item.arguments?.text() ?? '' };
    if (item.added.type !== 'message') return item.added;
    const content = [...item.parts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, { part, text }]) =>
        part.type === 'refusal' ? { ...part, refusal: text.text() } : { ...part, text: text.text() },
      );
    return { ...item.added, content };
  }
}

/** A response with each text of its output (text, refusal, function-call arguments) capped. */
export function capResponse(response: Json, maxChars: number): Json {
  if (!Array.isArray(response.output)) return response;
  return { ...response, output: response.output.map((item) => (isObject(item) ? capItem(item, maxChars) : item)) };
}

function capItem(item: Json, maxChars: number): Json {
  if (item.type === 'function_call' && typeof item.arguments === 'string') {
    return { ...item, arguments: capText(item.arguments, maxChars) };
  }
  if (item.type !== 'message' || !Array.isArray(item.content)) return item;
  const content = item.content.map((part) => {
    if (!isObject(part)) return part;
    if (typeof part.text === 'string') return { ...part, text: capText(part.text, maxChars) };
    if (typeof part.refusal === 'string') return { ...part, refusal: capText(part.refusal, maxChars) };
    return part;
  });
  return { ...item, content };
}
