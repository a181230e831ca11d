/**
 * The calls of the Keys page (docs/api.md "Keys"): list, make, change, revoke and
 * rotate the organization's keys, and read the key making the request (any key may). The secret is in
 * the answer that made or rotated it only. An error keeps the API's message and `param`.
 */
import { call, type Paged } from './api';
import type { KeyBody, KeyChange, RateLimits, Scope } from './lib/key-form';

/** A key as the API reads it: never its secret. */
export interface ApiKey {
  id: string;
  name: string;
  /** The first characters of the secret, to recognise it. */
  prefix: string;
  is_test: boolean;
  owner: { email: string; first_name: string; last_name: string };
  scopes: Scope[];
  /** Names, `prefix*` patterns and `provider/*`; empty: every model. */
  allowed_models: string[];
  expires_at: string | null;
  /** The key's own requests and tokens a minute; null for none. */
  rate_limits: RateLimits;
  created_at: string;
  /** Within a minute. */
  last_used_at: string | null;
  revoked_at: string | null;
}

/** The answer that makes or rotates a key: the key and its secret, shown this once. */
export type KeyWithSecret = ApiKey & { key: string };

const at = (id: string) => `keys/${encodeURIComponent(id)}/`;
const PAGE_SIZE = 100;

/** Every key of the organization, revoked ones included: page after page until the count is reached. */
export async function listKeys(key: string): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  for (let page = 1; ; page++) {
    const answer = await call<Paged<ApiKey>>(key, 'GET', `keys/?page=${page}&page_size=${PAGE_SIZE}`);
    keys.push(...answer.results);
    if (answer.results.length === 0 || keys.length >= answer.count) return keys;
  }
}

/** The key making the request: what it may do. */
export const currentKey = (key: string) => call<ApiKey>(key, 'GET', 'keys/current/');

export const createKey = (key: string, body: KeyBody) => call<KeyWithSecret>(key, 'POST', 'keys/', body);

export const patchKey = (key: string, id: string, body: KeyChange) => call<ApiKey>(key, 'PATCH', at(id), body);

/** Stops the key at once; it stays listed, revoked. */
export const revokeKey = (key: string, id: string) => call<null>(key, 'DELETE', at(id));

/** A new secret for the same key; the old one keeps working `graceSeconds`. */
export const rotateKey = (key: string, id: string, graceSeconds: number) =>
  call<KeyWithSecret>(key, 'POST', `${at(id)}rotate/`, { grace_seconds: graceSeconds });

/** Who owns each key that has an owner, by key name (scope `read`): the dashboard reads keys as developers. */
export async function keyOwners(key: string): Promise<Map<string, ApiKey['owner']>> {
  const answer = await call<{ results: { name: string; owner: ApiKey['owner'] }[] }>(key, 'GET', 'keys/owners/');
  return new Map(answer.results.map((r) => [r.name, r.owner]));
}

/** An owner as people read it: the name, else the email. */
export function ownerText(owner: ApiKey['owner']): string {
  return [owner.first_name, owner.last_name].filter(Boolean).join(' ') || owner.email;
}
