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
  return openAiUsage(usage, 'prompt_tokens', 'completion_tokens');
}

/** The `usage` of a Responses API response: input_tokens (cache reads in input_tokens_details), output_tokens. */
export function responsesUsageOf(usage: unknown): TokenUsage {
  return { ...openAiUsage(usage, 'input_tokens', 'output_tokens'), cacheWrite: 0 };
}

/** Both APIs' usage: the input and output counts by their names, each with its `_details`. */
function openAiUsage(usage: unknown, inputName: string, outputName: string): TokenUsage {
  const u = isObject(usage) ? usage : {};
  const input = u[`${inputName}_details`];
  const output = u[`${outputName}_details`];
  return {
    input: tokenCount(u[inputName]),
    output: tokenCount(u[outputName]),
    cacheRead: tokenCount(isObject(input) ? input.cached_tokens : undefined) ?? 0,
    cacheWrite: tokenCount(u.cache_creation_input_tokens) ?? 0,
    // OpenAI's cache has one lifetime; what a server says of Anthropic's one-hour writes is not read here.
    cacheWrite1h: 0,
    reasoning: tokenCount(isObject(output) ? output.reasoning_tokens : undefined),
  };
}
