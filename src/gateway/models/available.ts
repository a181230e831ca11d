/**
 * The models a key may call (docs/api.md "Model lists"), which GET /api/models and
 * GET /api/anthropic/v1/models list. The candidates are, provider by provider in the order they were
 * registered (providers with at least one key, of a kind this gatelog knows):
 *
 * - each name of its `models`, and for each `prefix*` the price catalog's models of the provider that
 *   start with it (the catalog's provider of the provider's name, else of its kind's);
 * - for a provider named as a kind with model families (openai, anthropic) and no base_url of its own
 *   (it calls the kind's own API), the catalog's models of that kind in those families.
 *
 * Each is then routed as a call naming it would be (choose-provider.ts): where the bare name reaches
 * this provider it is listed under it, else as `provider/model`, the name that does. The list holds each
 * name once (the first provider's), and only names the key's `allowed_models` allow, as a call checks them.
 */
import type { AuthContext } from '../../auth/authenticator.js';
import { modelAllowed } from '../../auth/model-patterns.js';
import type { TokenPrices } from '../../logs/pricing/price-model.js';
import { chooseProvider } from '../../providers/choose-provider.js';
import type { RegisteredProvider } from '../../providers/credentials.js';
import type { ProviderKindDefinition } from '../../providers/kind.js';
import type { ProxyDeps } from '../core/deps.js';

export type ModelListDeps = Pick<ProxyDeps, 'providerKeys' | 'providerKinds' | 'prices'>;

export interface AvailableModel {
  /** The name a call uses: the model, or `provider/model` when the bare name reaches another provider. */
  id: string;
  /** The name of the provider that serves it. */
  provider: string;
  /** That provider's kind. */
  kind: string;
  /** The catalog's name for people, else the id. */
  displayName: string;
  /** When its provider was registered (epoch ms): the lists' creation time. */
  createdAt: number;
  /** USD per million tokens, as a call of it is costed (null: no price of its own). */
  pricing: TokenPrices;
}

const UNKNOWN_PRICES: TokenPrices = { input: null, output: null, cache_read: null, cache_write: null };

export async function availableModels(
  deps: ModelListDeps,
  auth: AuthContext,
  at: number = Date.now(),
): Promise<AvailableModel[]> {
  const kinds = deps.providerKinds;
  const providers = await deps.providerKeys.providers(auth.organizationId);
  const listed = new Map<string, AvailableModel>();
  for (const provider of providers) {
    const kind = kinds.get(provider.kind);
    if (kind === undefined || provider.keys.length === 0) continue;
    for (const model of candidates(deps, provider, kind)) {
      const id = reaches(providers, model, provider, deps) ? model : `${provider.name}/${model}`;
      if (listed.has(id) || !modelAllowed(auth.allowedModels, id, provider.name)) continue;
      const described = deps.prices.describe(model, provider.name, at);
      listed.set(id, {
        id,
        provider: provider.name,
        kind: kind.name,
        displayName: described?.name ?? id,
        createdAt: provider.createdAt,
        pricing: described?.prices ?? UNKNOWN_PRICES,
      });
    }
  }
  return [...listed.values()];
}

/** The models a provider is listed with, in order: its own names and patterns, then its kind's families. */
function candidates(deps: ModelListDeps, provider: RegisteredProvider, kind: ProviderKindDefinition): string[] {
  const names: string[] = [];
  const catalog = () => {
    const own = deps.prices.catalogModels(provider.name);
    return own.length > 0 ? own : deps.prices.catalogModels(kind.name);
  };
  for (const pattern of provider.models ?? []) {
    if (!pattern.endsWith('*')) names.push(pattern);
    else names.push(...catalog().filter((model) => model.startsWith(pattern.slice(0, -1))));
  }
  if (provider.name === kind.name && kind.families.length > 0 && provider.baseUrl === null) {
    names.push(...deps.prices.catalogModels(kind.name).filter((model) => kind.families.some((f) => f.test(model))));
  }
  return names;
}

/** Whether a call naming `model` alone is served by `provider`, the model unchanged. */
function reaches(
  providers: readonly RegisteredProvider[],
  model: string,
  provider: RegisteredProvider,
  deps: ModelListDeps,
): boolean {
  try {
    const choice = chooseProvider(providers, model, deps.providerKinds);
    return choice.name === provider.name && choice.model === model;
  } catch {
    return false;
  }
}
