/**
 * What the Claude tests expect a call to cost: Claude Sonnet's prices from the price catalog, and the
 * usage of an answer that read from and wrote to the prompt cache, part of it for an hour, with its cost.
 */

/** Per million tokens, from the price catalog (Anthropic's public prices for Claude Sonnet 4 and 4.5). */
export const SONNET = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15 };

/** Anthropic's usage of an answer that read 3,000 cached tokens and wrote 2,000, 500 of them for an hour. */
export const ONE_HOUR_CACHE_USAGE = {
  input_tokens: 1000,
  cache_read_input_tokens: 3000,
  cache_creation_input_tokens: 2000,
  ephemeral_1h_input_tokens: 500,
  output_tokens: 500,
};

/** Its cost in dollars: the 500 tokens written for an hour at $6 per million rather than $3.75. */
export const ONE_HOUR_CACHE_COST =
  (1000 * SONNET.input +
    3000 * SONNET.cacheRead +
    1500 * SONNET.cacheWrite +
    500 * SONNET.cacheWrite1h +
    500 * SONNET.output) /
  1e6;
