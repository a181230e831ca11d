/**
 * The price table (CONTRACT §11), in USD. GATELOG_PRICING_FILE holds JSON of the same shape,
 * `{"<model>": {"input_per_million": n, "output_per_million": n, "per_minute": n}}`, whose entries
 * replace or add to the built-in ones.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../config.js';

const ModelPrice = z
  .object({
    input_per_million: z.number().nonnegative().optional(),
    output_per_million: z.number().nonnegative().optional(),
    per_minute: z.number().nonnegative().optional(),
  })
  .strict();
export type ModelPrice = z.infer<typeof ModelPrice>;

export const BUILT_IN_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'text-embedding-3-small': { input_per_million: 0.02 },
  'text-embedding-3-large': { input_per_million: 0.13 },
  'text-embedding-ada-002': { input_per_million: 0.1 },
  'whisper-1': { per_minute: 0.006 },
});

export interface Usage {
  model: string;
  promptTokens: number;
  completionTokens: number;
  audioSeconds?: number | null;
}

export class PriceTable {
  /** A Map: a log whose model is "constructor" must not find Object.prototype's. */
  private readonly prices: ReadonlyMap<string, ModelPrice>;

  constructor(prices: Readonly<Record<string, ModelPrice>>) {
    this.prices = new Map(Object.entries(prices));
  }

  /** Cost of a call; 0 for a model the table does not know. */
  cost(usage: Usage): number {
    const price = this.prices.get(usage.model);
    if (!price) return 0;
    const cost =
      (usage.promptTokens * (price.input_per_million ?? 0)) / 1e6 +
      (usage.completionTokens * (price.output_per_million ?? 0)) / 1e6 +
      ((usage.audioSeconds ?? 0) * (price.per_minute ?? 0)) / 60;
    // Round away binary noise (0.1 * 3 / 1e6) without losing anything a price can express.
    return Number(cost.toPrecision(12));
  }
}

/** The built-in table, extended by the pricing file when one is configured; a bad file stops start-up. */
export function loadPriceTable(file: string | null): PriceTable {
  if (file === null) return new PriceTable(BUILT_IN_PRICES);
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError('GATELOG_PRICING_FILE', `cannot read ${file} as JSON: ${(err as Error).message}`);
  }
  const result = z.record(z.string(), ModelPrice).safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError('GATELOG_PRICING_FILE', `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return new PriceTable({ ...BUILT_IN_PRICES, ...result.data });
}
