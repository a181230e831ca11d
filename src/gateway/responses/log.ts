/**
 * The log of a Responses API call (docs/api.md "Responses API"): the whole response as `output`, its
 * answer as one chat message, its usage as prompt and completion tokens (cached input at its own
 * price), counted locally when the provider gave none.
 */
import { attemptedModel } from '../../logs/indexed-text.js';
import type { ProxiedCall } from '../core/contract.js';
import { completionMessage } from './request.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const MAX_TOKENS_LOGGED = 1_000_000_000;

/** A token count from the provider, at most a billion (two still fit the log's 32-bit total). */
export const count = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.min(Math.round(v), MAX_TOKENS_LOGGED) : undefined;

/** The call's log from the whole response (the provider's JSON, or the stream's). */
export async function completeLog(call: ProxiedCall, response: Json, generationSeconds: number | null): Promise<void> {
  const { log } = call;
  if (typeof response.model === 'string' && response.model !== '')
    log.model = attemptedModel(response.model) ?? log.model;
  const { message, toolCalls } = completionMessage(response);
  log.output = response;
  log.completion_message = message;
  log.tool_calls = toolCalls.length > 0 ? toolCalls : undefined;
  const usage = isObject(response.usage) ? response.usage : null;
  let prompt = count(usage?.input_tokens);
  let completion = count(usage?.output_tokens);
  // A background response is generated after the call that made it, and counted then: nothing to estimate.
  const later = response.background === true && usage === null;
  if ((prompt === undefined || completion === undefined) && !later) {
    // No usage from the provider (a stream cut short, a server that does not count): counted here.
    const estimate = await estimateTokens(call, message);
    prompt ??= estimate.prompt;
    completion ??= estimate.completion;
    call.params.metadata = { ...call.params.metadata, usage_source: 'estimated' };
  }
  const promptTokens = prompt ?? 0;
  const completionTokens = completion ?? 0;
  log.prompt_tokens = promptTokens;
  log.completion_tokens = completionTokens;
  // A failed call (cut off, the client gone) costs 0 in its log, as every failed call does.
  log.cost =
    (log.status_code ?? 200) < 400 ? costOf(call, usage, log.model ?? '', promptTokens, completionTokens) : undefined;
  const generating = generationSeconds ?? log.latency ?? 0;
  if (generating > 0 && completionTokens > 0) log.tokens_per_second = completionTokens / generating;
}

/** USD from the catalog, cached input at its own price; undefined when the model has no price. */
export function costOf(
  call: ProxiedCall,
  usage: Json | null,
  model: string,
  promptTokens = count(usage?.input_tokens) ?? 0,
  completionTokens = count(usage?.output_tokens) ?? 0,
): number | undefined {
  const details = isObject(usage?.input_tokens_details) ? usage.input_tokens_details : null;
  const cost = call.deps.prices.cost({
    model,
    providerId: call.provider?.name ?? 'openai',
    promptTokens,
    completionTokens,
    cachedTokens: count(details?.cached_tokens) ?? 0,
  });
  // Unknown: the log marks it (new-log.ts).
  return cost ?? undefined;
}

/** Local token counts: the prompt's texts and the answer's, with gpt-tokenizer on a worker thread. */
async function estimateTokens(call: ProxiedCall, message: Json): Promise<{ prompt: number; completion: number }> {
  const texts = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v ?? '')));
  const prompt = (call.log.prompt_messages ?? []).map((m) => (isObject(m) && 'content' in m ? m.content : m));
  const answer = [message.content, message.refusal, message.tool_calls].filter((v) => v !== null && v !== undefined);
  const limits = { perText: Number.POSITIVE_INFINITY, total: Number.POSITIVE_INFINITY, countAll: true };
  try {
    const [promptCount, completionCount] = await Promise.all([
      call.deps.tokens.measure(texts(prompt), limits),
      call.deps.tokens.measure(texts(answer), limits),
    ]);
    return { prompt: promptCount.total ?? 0, completion: completionCount.total ?? 0 };
  } catch {
    return { prompt: 0, completion: 0 };
  }
}
