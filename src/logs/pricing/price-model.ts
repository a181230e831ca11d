/**
 * What a price and a call's usage are, for the catalog (price-catalog.ts) and the price table that
 * consults it with the operator's overrides (price-table.ts).
 */
import { z } from 'zod';

/** A price in GATELOG_PRICING_FILE, USD. */
export const ModelPrice = z
  .object({
    input_per_million: z.number().nonnegative().optional(),
    output_per_million: z.number().nonnegative().optional(),
    /** Input tokens read from the provider's prompt cache; without it they cost input_per_million. */
    cached_input_per_million: z.number().nonnegative().optional(),
    /** Input tokens written to the provider's prompt cache (Anthropic); without it they cost input_per_million. */
    cache_write_input_per_million: z.number().nonnegative().optional(),
    /** Writes to Anthropic's one-hour cache; without it they cost cache_write_input_per_million. */
    cache_write_1h_input_per_million: z.number().nonnegative().optional(),
    per_minute: z.number().nonnegative().optional(),
  })
  .strict();
export type ModelPrice = z.infer<typeof ModelPrice>;

export interface Usage {
  model: string;
  /** The log's provider_id, a hint for models several providers serve; '' or absent: none. */
  providerId?: string;
  /** Every input token, cached ones included (as OpenAI counts prompt_tokens). */
  promptTokens: number;
  /** Of promptTokens, those read from the provider's prompt cache (priced at the cached-input price). */
  cachedTokens?: number;
  /** Of promptTokens, those written to the provider's prompt cache (Anthropic; priced at the cache-write price). */
  cacheWriteTokens?: number;
  /** Of cacheWriteTokens, those written to Anthropic's one-hour cache (the rest: its five-minute cache). */
  cacheWrite1hTokens?: number;
  completionTokens: number;
  audioSeconds?: number | null;
  /** When the call was made (epoch ms): a few models cost differently by time of day. */
  at?: number;
}

/**
 * A model's token prices as the model lists show them (docs/api.md "Model lists"), USD per million
 * tokens; null where the model has no price of its own for that kind of token.
 */
export interface TokenPrices {
  input: number | null;
  output: number | null;
  /** Input read from the provider's prompt cache. */
  cache_read: number | null;
  /** Input written to the provider's prompt cache (Anthropic's five-minute cache). */
  cache_write: number | null;
}

/** The token prices of a price in gatelog's units (a flat catalog price, a pricing file's entry). */
export function tokenPricesOf(price: ModelPrice): TokenPrices {
  return {
    input: price.input_per_million ?? null,
    output: price.output_per_million ?? null,
    cache_read: price.cached_input_per_million ?? null,
    cache_write: price.cache_write_input_per_million ?? null,
  };
}
