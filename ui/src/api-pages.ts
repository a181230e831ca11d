/**
 * The calls of the settings, datasets and saved-views screens that change things: provider keys,
 * evaluators, datasets (create empty, rename, describe, delete) and views (rename, update, delete).
 * The same public API a script calls (docs/api.md); an error keeps the API's message and `param`.
 */
import { call, type Dataset, type Evaluator, type SavedView } from './api';

const at = (path: string, id: string) => `${path}${encodeURIComponent(id)}/`;

export interface ProviderKey {
  provider: string;
  base_url: string | null;
  api_key_preview: string;
  created_at: string;
  updated_at: string;
}

export const listProviderKeys = (key: string) => call<{ results: ProviderKey[] }>(key, 'GET', 'provider-keys/');

export const setProviderKey = (key: string, body: { provider: string; api_key: string; base_url?: string }) =>
  call<ProviderKey>(key, 'POST', 'provider-keys/', body);

export const deleteProviderKey = (key: string, provider: string) =>
  call<null>(key, 'DELETE', at('provider-keys/', provider));

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
