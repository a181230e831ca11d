/**
 * A streamed chat completion put back together, chunk by chunk, for its log: each choice by its
 * `index`, its content and refusal joined, its tool calls joined by their own `index` (never by the
 * position of a delta: parallel calls arrive interleaved), finish_reason, and the usage event. The
 * texts the log keeps are capped (GATELOG_LOG_MAX_BYTES), all of them together (choices, tool calls and
 * their names, however many): the client's stream is not, the log's copy is.
 */

import { AnswerTexts, type Capped } from '../../logs/capped-text.js';

type Json = Record<string, unknown>;

interface ToolCallParts {
  id: string | undefined;
  type: string;
  name: Capped;
  arguments: Capped;
}

interface ChoiceParts {
  role: string;
  content: Capped | null;
  refusal: Capped | null;
  toolCalls: Map<number, ToolCallParts>;
  finishReason: unknown;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export class ChatAssembler {
  id: string | undefined;
  created: number | undefined;
  model: string | undefined;
  systemFingerprint: unknown;
  usage: Json | null = null;
  /** performance.now() of the first chunk carrying content, a refusal or a tool call. */
  firstOutputAt: number | null = null;
  private readonly choices = new Map<number, ChoiceParts>();

  private readonly texts: AnswerTexts;

  constructor(maxChars: number) {
    this.texts = new AnswerTexts(maxChars);
  }

  /** Some text was longer than the log keeps: the completion is not the whole answer. */
  get cut(): boolean {
    return this.texts.cut;
  }

  /** One `chat.completion.chunk`. */
  add(chunk: Json, now: number): void {
    if (typeof chunk.id === 'string') this.id ??= chunk.id;
    if (typeof chunk.created === 'number') this.created ??= chunk.created;
    if (typeof chunk.model === 'string' && chunk.model !== '') this.model = chunk.model;
    if (chunk.system_fingerprint !== undefined) this.systemFingerprint = chunk.system_fingerprint;
    if (isObject(chunk.usage)) this.usage = chunk.usage;
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices) {
      if (!isObject(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const parts = this.choice(index);
      if (choice.finish_reason !== undefined && choice.finish_reason !== null)
        parts.finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!isObject(delta)) continue;
      if (typeof delta.role === 'string') parts.role = delta.role;
      let output = false;
      if (typeof delta.content === 'string' && delta.content !== '') {
        (parts.content ??= this.texts.text()).add(delta.content);
        output = true;
      }
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        (parts.refusal ??= this.texts.text()).add(delta.refusal);
        output = true;
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) if (isObject(call)) this.addToolCall(parts, call);
        output = output || delta.tool_calls.length > 0;
      }
      if (output) this.firstOutputAt ??= now;
    }
  }

  private choice(index: number): ChoiceParts {
    let parts = this.choices.get(index);
    if (parts === undefined) {
      parts = { role: 'assistant', content: null, refusal: null, toolCalls: new Map(), finishReason: null };
      this.choices.set(index, parts);
    }
    return parts;
  }

  private addToolCall(parts: ChoiceParts, call: Json): void {
    const index = typeof call.index === 'number' ? call.index : parts.toolCalls.size;
    let tool = parts.toolCalls.get(index);
    if (tool === undefined) {
      tool = { id: undefined, type: 'function', name: this.texts.text(), arguments: this.texts.text() };
      parts.toolCalls.set(index, tool);
    }
    if (typeof call.id === 'string') tool.id = call.id;
    if (typeof call.type === 'string') tool.type = call.type;
    const fn = call.function;
    if (isObject(fn)) {
      if (typeof fn.name === 'string') tool.name.add(fn.name);
      if (typeof fn.arguments === 'string') tool.arguments.add(fn.arguments);
    }
  }

  /** The choices in index order, each as a `chat.completion` choice. */
  private assembledChoices(): Json[] {
    return [...this.choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, parts]) => {
        const message: Json = {
          role: parts.role,
          content: parts.content?.text() ?? null,
          refusal: parts.refusal?.text() ?? null,
        };
        if (parts.toolCalls.size > 0) {
          message.tool_calls = [...parts.toolCalls.entries()]
            .sort(([a], [b]) => a - b)
            .map(([, tool]) => ({
              id: tool.id,
              type: tool.type,
              function: { name: tool.name.text(), arguments: tool.arguments.text() },
            }));
        }
        return { index, message, finish_reason: parts.finishReason, logprobs: null };
      });
  }

  /** The whole answer as a non-streamed call would have had it. */
  completion(): Json {
    return {
      id: this.id ?? null,
      object: 'chat.completion',
      created: this.created ?? null,
      model: this.model ?? null,
      choices: this.assembledChoices(),
      usage: this.usage,
      ...(this.systemFingerprint !== undefined ? { system_fingerprint: this.systemFingerprint } : {}),
    };
  }

  /** Every choice reached its finish_reason. */
  get finished(): boolean {
    return this.choices.size > 0 && [...this.choices.values()].every((c) => c.finishReason !== null);
  }
}
