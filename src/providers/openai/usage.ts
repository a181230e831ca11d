/**
 * The `usage` of an OpenAI chat completion (a provider's answer, or a chunk of its stream): every input
 * token in prompt_tokens, the cache reads among them in prompt_tokens_details.cached_tokens. Servers
 * that serve Claude behind OpenAI's API (and gatelog's own translation, anthropic/usage.ts) add the
 * cache writes as `cache_creation_input_tokens`, priced at their own price.
 */
import { type TokenUsage, tokenCount } from '../usage.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export function chatUsageOf(usage: unknown): TokenUsage {
  const u = isObject(usage) ? usage : {};
  const prompt = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
  return {
    input: tokenCount(u.prompt_tokens),
    output: tokenCount(u.completion_tokens),
    cacheRead: tokenCount(prompt.cached_tokens) ?? 0,
    cacheWrite: tokenCount(u.cache_creation_input_tokens) ?? 0,
    // OpenAI's cache has one lifetime; what a server says of Anthropic's one-hour writes is not read here.
    cacheWrite1h: 0,
    reasoning: tokenCount(completion.reasoning_tokens),
  };
}

/** The `usage` of a Responses API response: input_tokens (cache reads in input_tokens_details), output_tokens. */
export function responsesUsageOf(usage: unknown): TokenUsage {
  const u = isObject(usage) ? usage : {};
  const input = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  const output = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  return {
    input: tokenCount(u.input_tokens),
    output: tokenCount(u.output_tokens),
    cacheRead: tokenCount(input.cached_tokens) ?? 0,
    cacheWrite: 0,
    cacheWrite1h: 0,
    reasoning: tokenCount(output.reasoning_tokens),
  };
}
