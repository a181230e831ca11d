/**
 * Rate limits over HTTP (docs/api.md "Rate limits"): /api/rate-limits/ for a customer or the
 * organization, a key's own on the key; each bad input a 400 naming its field, admin only, no
 * organization reaching another's, and no key giving a key more than it has.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { twoTenantSuite } from '../support/harness.js';
import { madeByOther, refusedWithoutAdmin } from '../support/tenant-checks.js';

describe('rate limits over HTTP', () => {
  const tenants = twoTenantSuite();
  const { call } = tenants;

  it('makes, lists, reads, changes and removes a limit', async () => {
    const made = await call('POST', '/api/rate-limits/', {
      applies_to: { type: 'customer', value: 'acme' },
      requests_per_minute: 60,
    });
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(
      { applies_to: made.body.applies_to, rpm: made.body.requests_per_minute, tpm: made.body.tokens_per_minute },
      { applies_to: { type: 'customer', value: 'acme' }, rpm: 60, tpm: null },
    );
    const listed = await call('GET', '/api/rate-limits/');
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.results.map((r: { id: string }) => r.id),
      [made.body.id],
    );
    const changed = await call('PATCH', `/api/rate-limits/${made.body.id}/`, { tokens_per_minute: 10_000 });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.requests_per_minute, 60, 'what the change leaves out stays');
    assert.equal(changed.body.tokens_per_minute, 10_000);
    const read = await call('GET', `/api/rate-limits/${made.body.id}/`);
    assert.deepEqual(read.body, changed.body);
    assert.equal((await call('DELETE', `/api/rate-limits/${made.body.id}/`)).status, 204);
    assert.equal((await call('GET', `/api/rate-limits/${made.body.id}/`)).status, 404);
  });

  it('answers each bad input with a 400 naming its field', async () => {
    const cases: [unknown, string, RegExp][] = [
      [
        { applies_to: { type: 'key', value: tenants.a.keyId }, requests_per_minute: 5 },
        'applies_to.type',
        /on the key itself/,
      ],
      [{ applies_to: { type: 'customer' }, requests_per_minute: 5 }, 'applies_to.value', /customer_identifier/],
      [
        { applies_to: { type: 'organization', value: tenants.b.org.id }, requests_per_minute: 5 },
        'applies_to.value',
        /this organization/,
      ],
      [
        { applies_to: { type: 'customer', value: 'x' } },
        'requests_per_minute',
        /requests_per_minute or tokens_per_minute/,
      ],
      [{ applies_to: { type: 'customer', value: 'x' }, requests_per_minute: 0 }, 'requests_per_minute', /./],
      [{ applies_to: { type: 'customer', value: 'x' }, tokens_per_minute: 1.5 }, 'tokens_per_minute', /./],
      [{ applies_to: { type: 'team', value: 'x' }, tokens_per_minute: 5 }, 'applies_to.type', /./],
    ];
    for (const [body, param, message] of cases) {
      const res = await call('POST', '/api/rate-limits/', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.param, param, JSON.stringify(body));
      assert.match(res.body.error.message, message);
    }
    const made = await call('POST', '/api/rate-limits/', {
      applies_to: { type: 'organization' },
      tokens_per_minute: 5000,
    });
    assert.equal(made.status, 201, made.text);
    const twice = await call('POST', '/api/rate-limits/', {
      applies_to: { type: 'organization' },
      requests_per_minute: 5,
    });
    assert.equal(twice.status, 409, twice.text);
    assert.equal(twice.body.error.code, 'rate_limit_exists');
    const emptied = await call('PATCH', `/api/rate-limits/${made.body.id}/`, { tokens_per_minute: null });
    assert.equal(emptied.status, 400, emptied.text);
    assert.equal(emptied.body.error.param, 'requests_per_minute');
  });

  it("keeps each organization's limits its own, and to admin keys", async () => {
    const bOnly = { applies_to: { type: 'customer', value: 'b-only' }, requests_per_minute: 1 };
    const made = await madeByOther(tenants, '/api/rate-limits/', bOnly, { requests_per_minute: 2 });
    assert.ok(
      !(await call('GET', '/api/rate-limits/')).body.results.some((r: { id: string }) => r.id === made.body.id),
    );

    const refused = await refusedWithoutAdmin(tenants, '/api/rate-limits/');
    assert.equal(refused.body.error.code, 'permission_denied');
  });

  it("sets a key's own limits on the key, never above its maker's", async () => {
    const made = await call('POST', '/api/keys/', { name: 'limited maker', rate_limits: { requests_per_minute: 10 } });
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(made.body.rate_limits, { requests_per_minute: 10, tokens_per_minute: null });
    const maker = made.body.key as string;

    const inherited = await call('POST', '/api/keys/', { name: 'inherits' }, maker);
    assert.equal(inherited.status, 201, inherited.text);
    assert.deepEqual(inherited.body.rate_limits, { requests_per_minute: 10, tokens_per_minute: null });
    const lower = await call(
      'POST',
      '/api/keys/',
      { name: 'lower', rate_limits: { requests_per_minute: 5, tokens_per_minute: 100 } },
      maker,
    );
    assert.equal(lower.status, 201, lower.text);
    for (const rateLimits of [{ requests_per_minute: 20 }, {}]) {
      const res = await call(
        'POST',
        '/api/keys/',
        { name: `beyond ${JSON.stringify(rateLimits)}`, rate_limits: rateLimits },
        maker,
      );
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.param, 'rate_limits.requests_per_minute');
    }

    const changed = await call('PATCH', `/api/keys/${lower.body.id}/`, { rate_limits: { tokens_per_minute: 50 } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body.rate_limits, { requests_per_minute: null, tokens_per_minute: 50 }, 'replaced whole');
    const bad = await call('PATCH', `/api/keys/${lower.body.id}/`, { rate_limits: { requests_per_minute: -1 } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.param, 'rate_limits.requests_per_minute');
  });
});
