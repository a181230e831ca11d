/**
 * A chat completion's log (docs/api.md "Chat completions"): the completion read for its message and
 * tool calls, what it used, and request_breakdown — in the answer, or as the stream's last event.
 */
import { attemptedModel } from '../../logs/indexed-text.js';
import type { TokenUsage } from '../../providers/usage.js';
import type { ProxiedCall, UsageReport } from '../core/call.js';
import { requestBreakdown } from '../core/record.js';
import type { ChatRequest } from './request.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** §15's request_breakdown event: the last before [DONE], with no content for the client's stream helpers. */
export function breakdownChunk(head: { id?: unknown; created?: unknown; model?: unknown }, breakdown: Json): string {
  const event = {
    id: head.id ?? null,
    object: 'chat.completion.chunk',
    created: head.created ?? Math.floor(Date.now() / 1000),
    model: head.model ?? null,
    choices: [{ index: 0, delta: {}, finish_reason: null, request_breakdown: breakdown }],
  };
  return `data: ${JSON.stringify(event)}\n\n`;
}

/**
 * The call's log from the whole completion (the provider's JSON, or the stream put back together), and
 * what it used: the provider's counts, else the prompt's texts and the answer's to count.
 */
export function completeLog(
  call: ProxiedCall,
  request: ChatRequest,
  completion: Json,
  generationSeconds: number | null,
  /** The answer's counts as the provider gave them; null: it gave none. */
  usage: TokenUsage | null,
): UsageReport {
  const { log } = call;
  if (typeof completion.model === 'string' && completion.model !== '')
    log.model = attemptedModel(completion.model) ?? log.model;
  const choices = Array.isArray(completion.choices) ? completion.choices.filter(isObject) : [];
  const first = choices.find((c) => c.index === 0) ?? choices[0];
  const message = first && isObject(first.message) ? first.message : null;
  log.output = completion;
  log.completion_message = message;
  log.tool_calls = message && Array.isArray(message.tool_calls) ? message.tool_calls : undefined;
  return {
    model: log.model ?? request.model,
    usage,
    texts: () => ({
      prompt: texts(request.messages.map((m) => m.content)),
      completion: texts(
        choices.flatMap((c) => {
          const m = isObject(c.message) ? c.message : {};
          return [m.content, m.refusal, m.tool_calls].filter((v) => v !== null && v !== undefined);
        }),
      ),
    }),
    generationSeconds,
  };
}

const texts = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v ?? '')));

export function breakdownOf(call: ProxiedCall, request: ChatRequest): Json {
  const { log } = call;
  return {
    ...requestBreakdown(call, request.upstreamBody),
    prompt_messages: request.messages,
    completion_message: log.completion_message ?? null,
    stream: request.stream,
  };
}
