/**
 * What a call costs, in USD (docs/api.md, "Costs"). Prices come from the price catalog
 * (price-catalog.ts); GATELOG_PRICING_FILE holds JSON of the shape
 * `{"<model>": {"input_per_million": n, "output_per_million": n, "per_minute": n}}` whose entries
 * replace the catalog's price of the model they name, or price a model it lacks.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../config.js';
import { type CatalogDescription, flatCost, PriceCatalog } from './price-catalog.js';
import { ModelPrice, tokenPricesOf, type Usage } from './price-model.js';

/** Distinct unpriced models reported to `onUnpriced`; past it, further ones are not. */
const MAX_REPORTED_UNPRICED = 1000;

export class PriceTable {
  /** A Map: a log whose model is "constructor" must not find Object.prototype's. */
  private readonly overrides: ReadonlyMap<string, ModelPrice>;
  private readonly reported = new Set<string>();
  /** Told once per model that has no price (its calls' cost is unknown), e.g. to log a warning. */
  onUnpriced: ((model: string) => void) | null = null;

  constructor(
    overrides: Readonly<Record<string, ModelPrice>>,
    private readonly catalog: PriceCatalog = new PriceCatalog(),
  ) {
    this.overrides = new Map(Object.entries(overrides));
  }

  /**
   * Cost of a successful call; null — unknown, never a made-up 0 — for a model neither the pricing file
   * nor the catalog prices.
   */
  cost(usage: Usage): number | null {
    const override = this.overrides.get(usage.model);
    if (override) return flatCost(override, usage);
    const cost = this.catalog.cost(usage);
    if (cost !== null) return cost;
    // Nothing to price (a span without a model, a call that used nothing) costs nothing, known.
    if (usage.model === '' || (usage.promptTokens === 0 && usage.completionTokens === 0 && !usage.audioSeconds))
      return 0;
    if (this.reported.size < MAX_REPORTED_UNPRICED && !this.reported.has(usage.model)) {
      this.reported.add(usage.model);
      this.onUnpriced?.(usage.model);
    }
    return null;
  }

  /**
   * The model's name for people and its token prices at `at` (epoch ms) for the model lists, as a call
   * of it through the provider named `providerId` is costed: the pricing file's entry, else the
   * catalog's. Null when neither prices it.
   */
  describe(model: string, providerId: string, at: number): CatalogDescription | null {
    const override = this.overrides.get(model);
    const known = this.catalog.describe(model, providerId, at);
    if (override) return { name: known?.name ?? null, prices: tokenPricesOf(override) };
    return known;
  }

  /** The models the catalog lists for its provider `providerId` (price-catalog.ts). */
  catalogModels(providerId: string): readonly string[] {
    return this.catalog.models(providerId);
  }
}

/** The catalog, with the pricing file's entries over it when one is configured; a bad file stops start-up. */
export function loadPriceTable(file: string | null): PriceTable {
  if (file === null) return new PriceTable({});
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
  return new PriceTable(result.data);
}
