/**
 * The log of an Anthropic Messages call, in the shape of every chat log (docs/api.md "Anthropic
 * Messages API"): the system prompt and messages as prompt_messages, the answer's content blocks read
 * as an assistant message in the chat shape (text as `content`, tool_use blocks as OpenAI-shaped
 * `tool_calls`, thinking as `thinking`), the whole message as `output`, and its usage as prompt and
 * completion tokens (read by the one reader of Anthropic's usage, providers/anthropic/usage.ts), each
 * kind of input token priced at its own price.
 */
import { attemptedModel } from '../../logs/indexed-text.js';
import { usageOf } from '../../providers/anthropic/usage.js';
import { loggedUsage, type TokenUsage } from '../../providers/usage.js';
import type { MessagesRequest } from './request.js';
import type { ProxiedCall, UsageReport } from '../core/call.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The system prompt (as a system message) and the messages, as the log's prompt_messages. */
export function promptMessages(system: unknown, messages: unknown[]): unknown[] {
  return system === undefined || system === null ? messages : [{ role: 'system', content: system }, ...messages];
}

/** An answer's content blocks as the chat log's assistant message. */
export function completionMessage(message: Json): Json {
  const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : [];
  const texts: string[] = [];
  const thinking: string[] = [];
  const toolCalls: Json[] = [];
  for (const block of blocks) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') thinking.push(block.thinking);
    else if (block.type === 'tool_use') {
      const input = block.input;
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}) },
      });
    }
  }
  const result: Json = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (toolCalls.length > 0) result.tool_calls = toolCalls;
  if (thinking.length > 0) result.thinking = thinking.join('\n\n');
  return result;
}

/** A message's usage (or a stream's so far) as the log keeps it. */
export function loggedUsageOf(usage: unknown): TokenUsage {
  return loggedUsage(usageOf(usage));
}

/** What the log knows of the answer so far; `estimate` counts locally what the provider did not say. */
export interface Outcome {
  message: Json;
  /** The provider's final output count is known (always, but for a stream cut before message_delta). */
  outputCounted: boolean;
  /** Seconds spent generating (after the first output), or null: the whole latency then. */
  generationSeconds: number | null;
}

/**
 * Completes the call's log from the answer (the provider's JSON, or the stream put back together), and
 * says what it used: the provider's counts, else the prompt's texts and the answer's to count.
 */
export function completeLog(call: ProxiedCall, request: MessagesRequest, outcome: Outcome): UsageReport {
  const { log } = call;
  const { message } = outcome;
  if (typeof message.model === 'string' && message.model !== '') log.model = attemptedModel(message.model) ?? log.model;
  const completion = completionMessage(message);
  log.output = message;
  log.completion_message = completion;
  log.tool_calls = completion.tool_calls;
  const usage = usageOf(message.usage);
  return {
    model: log.model ?? request.model,
    usage: outcome.outputCounted ? usage : { ...usage, output: undefined },
    texts: () => ({
      prompt: texts([request.system, ...request.messages.map((m) => m.content)]),
      completion: texts([completion.content, completion.thinking, completion.tool_calls]),
    }),
    generationSeconds: outcome.generationSeconds,
  };
}

const texts = (values: unknown[]) =>
  values.filter((v) => v !== null && v !== undefined).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
