/**
 * The calls of the settings, datasets and saved-views screens that change things: provider keys,
 * the organization's settings and its response cache, evaluators, datasets (create empty, rename,
 * describe, delete) and views (rename, update, delete).
 * The same public API a script calls (docs/api.md); an error keeps the API's message and `param`.
 */
import { call, type Dataset, type Evaluator, type SavedView } from './api';
import type { ProviderKindInfo } from './lib/provider-form';

const at = (path: string, id: string) => `${path}${encodeURIComponent(id)}/`;

/** One of a provider's keys: calls are spread over them in proportion to their weights. */
export interface ProviderKeyEntry {
  key_id: string;
  api_key_preview: string;
  weight: number;
  created_at: string;
  updated_at: string;
}

/**
 * A provider as GET /api/provider-keys/ lists it: where and how it is called, what it serves, its keys,
 * and every kind's options as fields of their own (`api_version`), null where not set.
 */
export interface ProviderKey {
  provider: string;
  kind: string;
  base_url: string | null;
  models: string[] | null;
  /** Its first key's preview. */
  api_key_preview: string;
  keys: ProviderKeyEntry[];
  created_at: string;
  updated_at: string;
  [option: string]: unknown;
}

/** A POST registers the provider (or changes it: kind, base URL, models, options) and sets one key. */
export interface ProviderKeyInput {
  provider: string;
  api_key: string;
  base_url?: string;
  kind?: string;
  models?: string[];
  key_id?: string;
  weight?: number;
  /** Its kind's options (`api_version`). */
  [option: string]: unknown;
}

export const listProviderKeys = (key: string) => call<{ results: ProviderKey[] }>(key, 'GET', 'provider-keys/');

/** The kinds of provider the server calls, in order, with their options (the first is the default). */
export const listProviderKinds = (key: string) => call<{ results: ProviderKindInfo[] }>(key, 'GET', 'provider-kinds/');

export const setProviderKey = (key: string, body: ProviderKeyInput) =>
  call<ProviderKey>(key, 'POST', 'provider-keys/', body);

/** The provider with all its keys. */
export const deleteProviderKey = (key: string, provider: string) =>
  call<null>(key, 'DELETE', at('provider-keys/', provider));

/** One key of a provider; the provider and its other keys stay. */
export const deleteOneProviderKey = (key: string, provider: string, keyId: string) =>
  call<null>(key, 'DELETE', at(`${at('provider-keys/', provider)}keys/`, keyId));

/** The organization's settings: the defaults of every proxied call, which a call's own parameters override. */
export interface OrgSettings {
  cache_enabled: boolean;
  /** Seconds a cached answer is kept. */
  cache_ttl: number;
  cache_options: { cache_by_customer: boolean; omit_log: boolean };
  /** Days logs are kept (0: forever; null: the server's setting). */
  retention_days: number | null;
  /** Days what was said is kept (0: as long as the log; null: the server's setting). */
  content_retention_days: number | null;
}

export type OrgSettingsPatch = Partial<Omit<OrgSettings, 'cache_options'>> & {
  cache_options?: Partial<OrgSettings['cache_options']>;
};

export const getSettings = (key: string) => call<OrgSettings>(key, 'GET', 'settings/');

/** Changes the fields named; answers the whole object. */
export const patchSettings = (key: string, body: OrgSettingsPatch) =>
  call<OrgSettings>(key, 'PATCH', 'settings/', body);

/** Empties the organization's response cache: how many answers went. */
export const emptyCache = (key: string) => call<{ deleted: number }>(key, 'DELETE', 'cache/');

export type EvaluatorInput = Pick<Evaluator, 'name' | 'type' | 'description'> & {
  evaluator_slug?: string;
  score_value_type?: Evaluator['score_value_type'];
};

export const createEvaluator = (key: string, body: EvaluatorInput) => call<Evaluator>(key, 'POST', 'evaluators/', body);

/** The score type of an evaluator cannot change (its scores would change meaning): it is not sent. */
export const patchEvaluator = (key: string, id: string, body: Omit<EvaluatorInput, 'score_value_type'>) =>
  call<Evaluator>(key, 'PATCH', at('evaluators/', id), body);

export const createEmptyDataset = (key: string, name: string, description: string) =>
  call<Dataset>(key, 'POST', 'datasets/', { name, description });

export const patchDataset = (key: string, id: string, body: { name?: string; description?: string }) =>
  call<Dataset>(key, 'PATCH', at('datasets/', id), body);

export const deleteDataset = (key: string, id: string) => call<null>(key, 'DELETE', at('datasets/', id));

export const patchView = (key: string, id: string, body: Partial<Omit<SavedView, 'id'>>) =>
  call<SavedView>(key, 'PATCH', at('views/', id), body);

export const deleteView = (key: string, id: string) => call<null>(key, 'DELETE', at('views/', id));
