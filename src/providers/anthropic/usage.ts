/**
 * Anthropic's token counts, and the OpenAI `usage` object made of them. Anthropic counts the input in
 * three parts that do not overlap — `input_tokens` (after the last cache breakpoint), cache reads and
 * cache writes — where OpenAI's `prompt_tokens` is every input token, so the OpenAI view adds them up.
 * The four raw counts stay beside it: a cache write costs more than an input token, a read less.
 */

type Json = Record<string, unknown>;

/** The counts a Claude call is priced by. */
export interface AnthropicUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /** Of cacheCreationInputTokens, those written to the one-hour cache (priced higher than the five-minute one's). */
  cacheCreation1hInputTokens: number;
}

export const NO_USAGE: Readonly<AnthropicUsage> = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheCreation1hInputTokens: 0,
};

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined;

/**
 * `usage` from a message or a stream event laid over `base`: a count the event carries replaces the
 * base's (Anthropic's counts are totals so far, never increments to add), a count it lacks or sends as
 * null keeps the base's.
 */
export function readUsage(usage: unknown, base: Readonly<AnthropicUsage> = NO_USAGE): AnthropicUsage {
  if (!isObject(usage)) return { ...base };
  return {
    inputTokens: count(usage.input_tokens) ?? base.inputTokens,
    outputTokens: count(usage.output_tokens) ?? base.outputTokens,
    cacheReadInputTokens: count(usage.cache_read_input_tokens) ?? base.cacheReadInputTokens,
    cacheCreationInputTokens: count(usage.cache_creation_input_tokens) ?? base.cacheCreationInputTokens,
    cacheCreation1hInputTokens:
      (isObject(usage.cache_creation) ? count(usage.cache_creation.ephemeral_1h_input_tokens) : undefined) ??
      base.cacheCreation1hInputTokens,
  };
}

/**
 * OpenAI's `usage`: prompt_tokens is every input token (cache reads and writes included) and
 * prompt_tokens_details.cached_tokens the reads, as OpenAI counts them; the raw cache counts ride along
 * under Anthropic's own names so that a reader of the log can price the writes at their own price.
 */
export function openAIUsage(usage: Readonly<AnthropicUsage>, reasoningTokens?: number): Json {
  const prompt = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.outputTokens,
    total_tokens: prompt + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cacheReadInputTokens },
    ...(reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
    cache_read_input_tokens: usage.cacheReadInputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
  };
}

/** `usage.output_tokens_details.thinking_tokens`, when Anthropic reports it. */
export function thinkingTokens(usage: unknown): number | undefined {
  return isObject(usage) && isObject(usage.output_tokens_details)
    ? count(usage.output_tokens_details.thinking_tokens)
    : undefined;
}
