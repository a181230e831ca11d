/**
 * The log of a Responses API call (docs/api.md "Responses API"): the whole response as `output`, its
 * answer as one chat message, its usage as prompt and completion tokens (cached input at its own
 * price), counted locally when the provider gave none.
 */
import { attemptedModel } from '../../logs/indexed-text.js';
import { responsesUsageOf } from '../../providers/openai/usage.js';
import type { ProxiedCall, UsageReport } from '../core/call.js';
import { completionMessage } from './request.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const MAX_TOKENS_LOGGED = 1_000_000_000;

/** A token count from the provider, at most a billion (two still fit the log's 32-bit total). */
export const count = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.min(Math.round(v), MAX_TOKENS_LOGGED) : undefined;

/**
 * The call's log from the whole response (the provider's JSON, or the stream's), and what it used: the
 * provider's counts, else the prompt's texts and the answer's to count.
 */
export function completeLog(call: ProxiedCall, response: Json, generationSeconds: number | null): UsageReport {
  const { log } = call;
  if (typeof response.model === 'string' && response.model !== '')
    log.model = attemptedModel(response.model) ?? log.model;
  const { message, toolCalls } = completionMessage(response);
  log.output = response;
  log.completion_message = message;
  log.tool_calls = toolCalls.length > 0 ? toolCalls : undefined;
  const usage = isObject(response.usage) ? responsesUsageOf(response.usage) : null;
  // A background response is generated after the call that made it, and counted then: nothing to estimate.
  const later = response.background === true && usage === null;
  return {
    model: log.model ?? '',
    usage,
    texts: later
      ? null
      : () => ({
          prompt: texts((log.prompt_messages ?? []).map((m) => (isObject(m) && 'content' in m ? m.content : m))),
          completion: texts(
            [message.content, message.refusal, message.tool_calls].filter((v) => v !== null && v !== undefined),
          ),
        }),
    generationSeconds,
  };
}

const texts = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v ?? '')));
