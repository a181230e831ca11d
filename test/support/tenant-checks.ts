/**
 * Checks that an organization's resources (/api/<things>/) are its own and its admin keys' alone, for
 * suites of two tenants (twoTenantSuite).
 */
import assert from 'node:assert/strict';
import type { ApiResponse, TwoTenantSuite } from './harness.js';

/**
 * An item tenant b makes at the collection `path`, which tenant a's key can neither read, change
 * (`change`) nor delete: 404, as for no item. Answers the item as made.
 */
export async function madeByOther(
  tenants: TwoTenantSuite,
  path: string,
  body: unknown,
  change: unknown,
): Promise<ApiResponse> {
  const made = await tenants.call('POST', path, body, tenants.b.key);
  assert.equal(made.status, 201, made.text);
  for (const [method, sent] of [['GET'], ['PATCH', change], ['DELETE']] as const) {
    const res = await tenants.call(method, `${path}${made.body.id}/`, sent);
    assert.equal(res.status, 404, `${method}: ${res.text}`);
  }
  return made;
}

/** A key of tenant a's without the admin scope, refused the list at `path` (403): the refusal. */
export async function refusedWithoutAdmin(tenants: TwoTenantSuite, path: string): Promise<ApiResponse> {
  const reader = await tenants.call('POST', '/api/keys/', { name: 'no admin', scopes: ['models', 'read'] });
  const refused = await tenants.call('GET', path, undefined, reader.body.key);
  assert.equal(refused.status, 403, refused.text);
  return refused;
}
