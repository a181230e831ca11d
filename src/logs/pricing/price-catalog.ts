/**
 * Model prices from the @pydantic/genai-prices catalog: chat, completion, embedding and transcription
 * models of every major provider, in USD. The catalog's data ships inside the package and is loaded
 * with it at start-up; nothing is fetched.
 *
 * Matching a model name against the catalog walks its providers' match rules (~50 µs), too slow for
 * every ingested log, so each (provider, model) is matched once and remembered. A model with one plain
 * price is then costed here with three multiplications; the few models whose price depends on the time
 * of day or on the prompt's size keep the catalog's own calculation, restricted to the matched model.
 */
import { calcPrice, findProvider, type ModelPrice as CatalogPrice, type Provider } from '@pydantic/genai-prices';
import { type ModelPrice, type TokenPrices, tokenPricesOf, type Usage } from './price-model.js';

/** How a model is costed, and its name for people (the catalog's, when it has one). */
type Entry =
  | { kind: 'flat'; price: ModelPrice; name: string | null }
  | { kind: 'exact'; provider: Provider; name: string | null }
  | null;

/** What the catalog says of a model for the model lists: its name for people and its token prices now. */
export interface CatalogDescription {
  name: string | null;
  prices: TokenPrices;
}

/**
 * Catalog entries that price every fine-tuned model of a base (`ft:gpt-3.5-turbo-`,
 * `gpt-4o-mini-2024-07-18.ft-`): each tuned model's name is its organization's own, none of them this one.
 */
const FINE_TUNED_CLASS = /^ft:|\.ft-/;

/** Distinct (provider, model) pairs remembered; past it, further ones are matched each time. */
const MAX_REMEMBERED = 10_000;
/** gatelog proxies OpenAI's API: a log naming no provider (or one the catalog lacks) is looked up there too. */
const DEFAULT_PROVIDER = 'openai';

export class PriceCatalog {
  /** Provider id → model → entry: two lookups, no key string built per call. */
  private readonly entries = new Map<string, Map<string, Entry>>();
  private remembered = 0;
  /** The listed names of each catalog provider asked for (the catalog does not change while gatelog runs). */
  private readonly names = new Map<string, readonly string[]>();

  /** The call's cost in USD, or null when the catalog has no price for its model. */
  cost(usage: Usage): number | null {
    const entry = this.entry(usage.model, usage.providerId ?? '');
    if (entry === null) return null;
    if (entry.kind === 'flat') return flatCost(entry.price, usage);
    try {
      const result = calcPrice(
        {
          input_tokens: usage.promptTokens,
          cache_read_tokens: usage.cachedTokens ?? 0,
          cache_write_tokens: usage.cacheWriteTokens ?? 0,
          cache_write_1h_tokens: usage.cacheWrite1hTokens ?? 0,
          output_tokens: usage.completionTokens,
          audio_seconds: usage.audioSeconds ?? 0,
        },
        usage.model,
        { provider: entry.provider, timestamp: usage.at === undefined ? undefined : new Date(usage.at) },
      );
      return result === null ? null : round(result.total_price);
    } catch {
      // The catalog refuses usage it cannot split (e.g. audio a model prices per audio token).
      return null;
    }
  }

  /**
   * The model's name for people and its token prices at `at`, as a call of it through the provider
   * named `providerId` would be costed; null when the catalog does not know it. A price that depends
   * on the time is the one in force at `at`; one that rises past a prompt size is given at its base
   * (below the first tier).
   */
  describe(model: string, providerId: string, at: number): CatalogDescription | null {
    const entry = this.entry(model, providerId);
    if (entry === null) return null;
    if (entry.kind === 'flat') return { name: entry.name, prices: tokenPricesOf(entry.price) };
    let found;
    try {
      found = calcPrice({ input_tokens: 0 }, model, { provider: entry.provider, timestamp: new Date(at) });
    } catch {
      found = null;
    }
    if (!found) return null;
    const price = found.model_price;
    const base = (key: string): number | null => {
      const value: unknown = price[key];
      if (typeof value === 'number') return value;
      const tiered = value as { base?: unknown } | undefined;
      return typeof tiered?.base === 'number' ? tiered.base : null;
    };
    return {
      name: entry.name,
      prices: {
        input: base('input_mtok'),
        output: base('output_mtok'),
        cache_read: base('cache_read_mtok'),
        cache_write: base('cache_write_mtok'),
      },
    };
  }

  /**
   * The models the catalog lists for its provider `providerId` (exactly that id; [] for one it lacks),
   * in its order: each entry whose id is a name it prices (its own rule matches it), none deprecated,
   * none of the fine-tuned classes.
   */
  models(providerId: string): readonly string[] {
    const known = this.names.get(providerId);
    if (known !== undefined) return known;
    const names = catalogNames(providerId);
    // Only the catalog's own providers (a few dozen) are remembered, not every name an organization gives.
    if (names === null) return [];
    this.names.set(providerId, names);
    return names;
  }

  private entry(model: string, providerId: string): Entry {
    let models = this.entries.get(providerId);
    const known = models?.get(model);
    if (known !== undefined) return known;
    const entry = resolve(model, providerId);
    if (this.remembered < MAX_REMEMBERED) {
      if (models === undefined) this.entries.set(providerId, (models = new Map()));
      models.set(model, entry);
      this.remembered += 1;
    }
    return entry;
  }
}

function resolve(model: string, providerId: string): Entry {
  if (model === '') return null;
  // The log's provider first, then the catalog's own guess from the model name, then OpenAI.
  const attempts = providerId !== '' ? [providerId, undefined, DEFAULT_PROVIDER] : [undefined, DEFAULT_PROVIDER];
  for (const attempt of attempts) {
    let found;
    try {
      found = calcPrice({ input_tokens: 0 }, model, attempt === undefined ? {} : { providerId: attempt });
    } catch {
      found = null;
    }
    if (!found) continue;
    const prices = found.model.prices;
    const flat = Array.isArray(prices) ? null : flatten(prices);
    const name = found.model.name ?? null;
    return flat
      ? { kind: 'flat', price: flat, name }
      : { kind: 'exact', provider: { ...found.provider, models: [found.model] }, name };
  }
  return null;
}

/** The listed names of the catalog's provider `providerId`; null when the catalog has no provider of that id. */
function catalogNames(providerId: string): string[] | null {
  const provider = findProvider({ providerId });
  // findProvider also matches by likeness (`my-openai` finds openai): only the provider of that id counts.
  if (provider === undefined || provider.id !== providerId) return null;
  return provider.models
    .filter((model) => {
      if (model.deprecated === true || FINE_TUNED_CLASS.test(model.id)) return false;
      try {
        return calcPrice({ input_tokens: 0 }, model.id, { provider: { ...provider, models: [model] } }) !== null;
      } catch {
        return false;
      }
    })
    .map((model) => model.id);
}

/** A price of plain numbers in the units gatelog costs; null when any of them is tiered. */
function flatten(price: CatalogPrice): ModelPrice | null {
  const number = (key: string): number | undefined => {
    const value = price[key];
    return typeof value === 'number' ? value : undefined;
  };
  for (const key of [
    'input_mtok',
    'output_mtok',
    'cache_read_mtok',
    'cache_write_mtok',
    'cache_write_1h_mtok',
    'audio_hours',
    'input_audio_hours',
  ]) {
    if (price[key] !== undefined && number(key) === undefined) return null;
  }
  const perHour = number('input_audio_hours') ?? number('audio_hours');
  return {
    input_per_million: number('input_mtok'),
    output_per_million: number('output_mtok'),
    cached_input_per_million: number('cache_read_mtok'),
    cache_write_input_per_million: number('cache_write_mtok'),
    cache_write_1h_input_per_million: number('cache_write_1h_mtok'),
    per_minute: perHour === undefined ? undefined : perHour / 60,
  };
}

export function flatCost(price: ModelPrice, usage: Usage): number {
  const input = price.input_per_million ?? 0;
  const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.promptTokens - cached);
  const writtenForAnHour = Math.min(usage.cacheWrite1hTokens ?? 0, written);
  const writePrice = price.cache_write_input_per_million ?? input;
  const cost =
    ((usage.promptTokens - cached - written) * input) / 1e6 +
    (cached * (price.cached_input_per_million ?? input)) / 1e6 +
    ((written - writtenForAnHour) * writePrice) / 1e6 +
    (writtenForAnHour * (price.cache_write_1h_input_per_million ?? writePrice)) / 1e6 +
    (usage.completionTokens * (price.output_per_million ?? 0)) / 1e6 +
    ((usage.audioSeconds ?? 0) * (price.per_minute ?? 0)) / 60;
  return round(cost);
}

/** Rounds away binary noise (0.1 * 3 / 1e6) without losing anything a price can express. */
const round = (cost: number): number => Number(cost.toPrecision(12));
