/**
 * The scope every authenticated route needs (docs/api.md "Keys"), in one table
 * so that what a key may reach can be read in one place. A route registered without an entry stops the
 * server from starting: a new route cannot be reachable by every key by accident. An entry of two
 * scopes is a route whose body says which one applies (POST /api/request-logs/ lists or records): the
 * key needs one of them here and the handler checks the one its body asks for.
 */
import type { RouteScope, Scope } from '../../auth/scopes.js';

export type RouteScopeRule = RouteScope | readonly [Scope, Scope];

export const ROUTE_SCOPES: Readonly<Record<string, RouteScopeRule>> = {
  'GET /api/keys/current/': 'any',
  'GET /api/keys/owners/': 'read',
  'POST /api/anthropic/v1/messages': 'models',
  'POST /api/anthropic/v1/messages/count_tokens': 'models',
  'POST /api/audio/transcription': 'models',
  'POST /api/audio/transcriptions': 'models',
  'POST /api/chat/completions': 'models',
  'POST /api/embeddings': 'models',
  'POST /api/responses': 'models',
  'DELETE /api/responses/:response_id': 'models',
  'GET /api/responses/:response_id': 'models',
  'POST /api/responses/:response_id/cancel': 'models',
  'GET /api/responses/:response_id/input_items': 'models',
  'POST /v1/anthropic/v1/messages': 'models',
  'POST /v1/anthropic/v1/messages/count_tokens': 'models',
  'POST /v1/audio/transcription': 'models',
  'POST /v1/audio/transcriptions': 'models',
  'POST /v1/chat/completions': 'models',
  'POST /v1/embeddings': 'models',
  'POST /v1/messages': 'models',
  'POST /v1/messages/count_tokens': 'models',
  'POST /v1/responses': 'models',
  'DELETE /v1/responses/:response_id': 'models',
  'GET /v1/responses/:response_id': 'models',
  'POST /v1/responses/:response_id/cancel': 'models',
  'GET /v1/responses/:response_id/input_items': 'models',
  'POST /api/request-logs/': ['read', 'ingest'],
  'POST /api/request-logs/batch/': 'ingest',
  'POST /api/request-logs/create/': 'ingest',
  'PATCH /api/request-logs/:unique_id/': 'ingest',
  'POST /api/v1/traces': 'ingest',
  'POST /v1/traces': 'ingest',
  'GET /api/datasets/': 'read',
  'POST /api/datasets/': 'read',
  'GET /api/datasets/list/': 'read',
  'DELETE /api/datasets/:dataset_id/': 'read',
  'GET /api/datasets/:dataset_id/': 'read',
  'PATCH /api/datasets/:dataset_id/': 'read',
  'POST /api/datasets/:dataset_id/logs/': 'read',
  'POST /api/datasets/:dataset_id/logs/bulk/': 'read',
  'DELETE /api/datasets/:dataset_id/logs/delete/': 'read',
  'GET /api/datasets/:dataset_id/logs/list/': 'read',
  'POST /api/datasets/:dataset_id/logs/list/': 'read',
  'DELETE /api/datasets/:dataset_id/logs/:log_id/': 'read',
  'GET /api/datasets/:dataset_id/logs/:log_id/': 'read',
  'PATCH /api/datasets/:dataset_id/logs/:log_id/': 'read',
  'POST /api/datasets/:dataset_id/logs/:log_id/scores/': 'read',
  'GET /api/evaluators/': 'read',
  'GET /api/evaluators/:id/': 'read',
  'GET /api/logs/:unique_id/scores/': 'read',
  'POST /api/logs/:unique_id/scores/': 'read',
  'DELETE /api/logs/:unique_id/scores/:score_id/': 'read',
  'GET /api/provider-kinds/': 'read',
  'GET /api/request-logs/': 'read',
  'GET /api/request-logs/export/': 'read',
  'POST /api/request-logs/export/': 'read',
  'POST /api/request-logs/export/tokens/': 'read',
  'GET /api/request-logs/facets/': 'read',
  'POST /api/request-logs/facets/': 'read',
  'GET /api/request-logs/list/': 'read',
  'POST /api/request-logs/list/': 'read',
  'GET /api/request-logs/stream/': 'read',
  'POST /api/request-logs/summary/': 'read',
  'GET /api/request-logs/:unique_id/': 'read',
  'GET /api/request-logs/:unique_id/scores/': 'read',
  'POST /api/request-logs/:unique_id/scores/': 'read',
  'DELETE /api/request-logs/:unique_id/scores/:score_id/': 'read',
  'GET /api/settings/': 'read',
  'GET /api/views/': 'read',
  'POST /api/views/': 'read',
  'DELETE /api/views/:id/': 'read',
  'GET /api/views/:id/': 'read',
  'PATCH /api/views/:id/': 'read',
  'DELETE /api/cache/': 'admin',
  'POST /api/evaluators/': 'admin',
  'DELETE /api/evaluators/:id/': 'admin',
  'PATCH /api/evaluators/:id/': 'admin',
  'GET /api/provider-keys/': 'admin',
  'POST /api/provider-keys/': 'admin',
  'DELETE /api/provider-keys/:provider/': 'admin',
  'DELETE /api/provider-keys/:provider/keys/:key_id/': 'admin',
  'DELETE /api/request-logs/:unique_id/': 'ingest',
  'PATCH /api/settings/': 'admin',
  'GET /api/keys/': 'admin',
  'POST /api/keys/': 'admin',
  'GET /api/keys/:id/': 'admin',
  'PATCH /api/keys/:id/': 'admin',
  'DELETE /api/keys/:id/': 'admin',
  'POST /api/keys/:id/rotate/': 'admin',
  'GET /api/rate-limits/': 'admin',
  'POST /api/rate-limits/': 'admin',
  'GET /api/rate-limits/:id/': 'admin',
  'PATCH /api/rate-limits/:id/': 'admin',
  'DELETE /api/rate-limits/:id/': 'admin',
  'GET /api/budgets/': 'admin',
  'POST /api/budgets/': 'admin',
  'GET /api/budgets/:id/': 'admin',
  'PATCH /api/budgets/:id/': 'admin',
  'DELETE /api/budgets/:id/': 'admin',
};

/** The rule for a route as Fastify registers it ("GET /api/views/:id/"); HEAD is its GET. */
export function scopeRuleOf(method: string, url: string): RouteScopeRule | undefined {
  return ROUTE_SCOPES[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}

/** How the OpenAPI document and the docs name a rule. */
export function describeScopeRule(rule: RouteScopeRule): string {
  if (rule === 'any') return 'any key';
  return typeof rule === 'string' ? rule : `${rule[0]} or ${rule[1]}, by the body`;
}
