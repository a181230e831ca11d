/**
 * Which provider serves a model (docs/api.md "Providers"): `name/model` names it (the prefix is removed
 * upstream); else the first registered provider whose `models` match; else the kinds' model families
 * (registry.ts: gpt-*, o1…, text-embedding-*, whisper-* → openai; claude-* → anthropic). Then, so that an `openai`
 * provider pointed at a compatible server before providers had names keeps serving what it served, such
 * a provider without a models list takes the rest. None → 400 provider_not_found naming the model.
 */
import { AppError } from '../errors.js';
import type { ProviderKind, RegisteredProvider } from './credentials.js';
import type { ProviderKindDefinition } from './kind.js';
import { BUILT_IN_PROVIDER_KINDS, type ProviderRegistry } from './registry.js';

export interface ProviderChoice {
  /** The provider's name: the log's provider_id, the key of customer_credentials. */
  name: string;
  kind: ProviderKind;
  /** Its kind as the registry defines it: how it is called. */
  definition: ProviderKindDefinition;
  /** What the organization registered under that name, or null (a built-in provider without a key yet). */
  registered: RegisteredProvider | null;
  /** The model as the provider knows it. */
  model: string;
}

/** A registered model entry: a name, or a prefix ending in `*`. */
export function modelMatches(pattern: string, model: string): boolean {
  return pattern.endsWith('*') ? model.startsWith(pattern.slice(0, -1)) : pattern === model;
}

export function chooseProvider(
  providers: readonly RegisteredProvider[],
  model: string,
  kinds: ProviderRegistry = BUILT_IN_PROVIDER_KINDS,
): ProviderChoice {
  const of = (registered: RegisteredProvider, upstreamModel: string): ProviderChoice => ({
    name: registered.name,
    kind: registered.kind,
    definition: kinds.kindOf(registered),
    registered,
    model: upstreamModel,
  });
  const named = (name: string, upstreamModel: string): ProviderChoice | null => {
    const registered = providers.find((p) => p.name === name) ?? null;
    if (registered) return of(registered, upstreamModel);
    const definition = kinds.builtInProvider(name);
    if (definition) return { name, kind: name, definition, registered: null, model: upstreamModel };
    return null;
  };
  const slash = model.indexOf('/');
  if (slash > 0 && slash < model.length - 1) {
    // A name gatelog does not know is part of the model's own name (`meta-llama/Llama-3.1-8B` on vLLM).
    const chosen = named(model.slice(0, slash), model.slice(slash + 1));
    if (chosen) return chosen;
  }
  for (const p of providers) {
    if (p.models?.some((pattern) => modelMatches(pattern, model))) return of(p, model);
  }
  for (const family of kinds.familiesOf(model)) {
    const chosen = named(family.name, model);
    if (chosen) return chosen;
  }
  const compatible = providers.find((p) => p.name === 'openai' && p.baseUrl !== null && p.models === null);
  if (compatible) return of(compatible, model);
  throw new AppError(
    400,
    'provider_not_found',
    `No provider serves model '${model}'. Name one as 'provider/${model}', or register the provider with ` +
      `the model in its models (POST /api/provider-keys/ {"provider": "...", "models": ["${model}"], ...}).`,
    'model',
  );
}

/** One of a provider's keys, chosen at random in proportion to the keys' weights. */
export function pickKey<K extends { weight: number }>(keys: readonly K[], random: number = Math.random()): K | null {
  if (keys.length <= 1) return keys[0] ?? null;
  const total = keys.reduce((sum, k) => sum + k.weight, 0);
  let at = random * total;
  for (const key of keys) {
    at -= key.weight;
    if (at < 0) return key;
  }
  return keys[keys.length - 1];
}
