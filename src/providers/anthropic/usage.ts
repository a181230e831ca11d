/**
 * Anthropic's token counts — one reader for its own route (gateway/messages/log.ts) and for a chat call
 * translated to Claude — and the OpenAI `usage` object made of them. Anthropic counts the input in
 * three parts that do not overlap — `input_tokens` (after the last cache breakpoint), cache reads and
 * cache writes (`cache_creation.ephemeral_1h_input_tokens` of them for an hour) — where OpenAI's
 * `prompt_tokens` is every input token, so the normalized `input` and the OpenAI view add them up.
 */
import { type TokenUsage, tokenCount } from '../usage.js';

type Json = Record<string, unknown>;

/** The counts as Anthropic gives them, each undefined until an event carries it. */
export interface AnthropicCounts {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  thinking?: number;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `usage` from a message or a stream event laid over `base`: a count the event carries replaces the
 * base's (Anthropic's counts are totals so far, never increments to add), a count it lacks or sends as
 * null keeps the base's.
 */
export function readCounts(usage: unknown, base: Readonly<AnthropicCounts> = {}): AnthropicCounts {
  if (!isObject(usage)) return { ...base };
  const creation = isObject(usage.cache_creation) ? usage.cache_creation : {};
  const details = isObject(usage.output_tokens_details) ? usage.output_tokens_details : {};
  return {
    input: tokenCount(usage.input_tokens) ?? base.input,
    output: tokenCount(usage.output_tokens) ?? base.output,
    cacheRead: tokenCount(usage.cache_read_input_tokens) ?? base.cacheRead,
    cacheWrite: tokenCount(usage.cache_creation_input_tokens) ?? base.cacheWrite,
    cacheWrite1h: tokenCount(creation.ephemeral_1h_input_tokens) ?? base.cacheWrite1h,
    thinking: tokenCount(details.thinking_tokens) ?? base.thinking,
  };
}

/** The counts in gatelog's one shape: `input` is every input token, known once input_tokens is. */
export function tokenUsageOf(counts: Readonly<AnthropicCounts>): TokenUsage {
  const cacheRead = counts.cacheRead ?? 0;
  const cacheWrite = counts.cacheWrite ?? 0;
  return {
    input: counts.input === undefined ? undefined : counts.input + cacheRead + cacheWrite,
    output: counts.output,
    cacheRead,
    cacheWrite,
    cacheWrite1h: counts.cacheWrite1h ?? 0,
    reasoning: counts.thinking,
  };
}

/** A message's (or a stream's usage so far) `usage`, in gatelog's one shape. */
export function usageOf(usage: unknown): TokenUsage {
  return tokenUsageOf(readCounts(usage));
}

/**
 * The counts as a chat completion tells them: OpenAI's usage has no "not said", so an input or output
 * count Anthropic left out is 0 there (input: the cache's counts alone).
 */
export function chatCounts(usage: Readonly<TokenUsage>): TokenUsage {
  return { ...usage, input: usage.input ?? usage.cacheRead + usage.cacheWrite, output: usage.output ?? 0 };
}

/**
 * OpenAI's `usage`: prompt_tokens is every input token (cache reads and writes included) and
 * prompt_tokens_details.cached_tokens the reads, as OpenAI counts them; the raw cache counts ride along
 * under Anthropic's own names so that a reader of the log can price the writes at their own price.
 */
export function openAIUsage(usage: Readonly<TokenUsage>): Json {
  const counts = chatCounts(usage);
  const prompt = counts.input ?? 0;
  const output = counts.output ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead },
    ...(usage.reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: usage.reasoning } } : {}),
    cache_read_input_tokens: usage.cacheRead,
    cache_creation_input_tokens: usage.cacheWrite,
  };
}
