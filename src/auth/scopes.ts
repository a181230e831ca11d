/**
 * What a key may do (docs/api.md "Keys"): each route needs one scope, and a key
 * holds a non-empty set of them. A test key never holds `admin`: settings such as retention delete
 * production logs.
 */
export const SCOPES = ['models', 'ingest', 'read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** What a route needs: a scope, or `any` for what every key may ask (who it is). */
export type RouteScope = Scope | 'any';

export const SCOPE_MEANINGS: Record<Scope, string> = {
  models: 'proxied model routes (chat, messages, responses, embeddings, speech-to-text)',
  ingest: 'the logging API and OpenTelemetry traces',
  read: 'lists, log items, search, analytics, live tail, export, datasets and their annotation',
  admin: 'keys, provider keys, budgets, rate limits, settings, cache purge, evaluators',
};

export function defaultScopes(isTest: boolean): Scope[] {
  return isTest ? ['models', 'ingest', 'read'] : [...SCOPES];
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The scopes in their canonical order, without repeats. */
export function orderScopes(scopes: readonly Scope[]): Scope[] {
  return SCOPES.filter((s) => scopes.includes(s));
}
