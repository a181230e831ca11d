/**
 * Budgets over HTTP (docs/api.md "Budgets"): made, listed, read with their period's standing, changed and
 * removed by admin keys; each bad input a 400 naming its field; no organization reaching another's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { twoTenantSuite } from '../support/harness.js';
import { madeByOther, refusedWithoutAdmin } from '../support/tenant-checks.js';

describe('budgets over HTTP', () => {
  const tenants = twoTenantSuite();
  const { call } = tenants;

  it('makes a budget with its defaults, and reads it with its period', async () => {
    const made = await call('POST', '/api/budgets/', {
      name: 'team',
      applies_to: { type: 'organization' },
      amount_usd: 100,
    });
    assert.equal(made.status, 201, made.text);
    const { id, created_at: _c, updated_at: _u, period_start, period_end, ...rest } = made.body;
    assert.deepEqual(rest, {
      name: 'team',
      applies_to: { type: 'organization', value: tenants.a.org.id },
      amount_usd: 100,
      period: 'month',
      tz: 'UTC',
      alert_thresholds: [0.8, 1],
      webhook_url: null,
      allow_unpriced: false,
      spent_usd: 0,
      reserved_usd: 0,
      remaining_usd: 100,
    });
    const now = new Date();
    assert.equal(period_start, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    assert.equal(period_end, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());
    assert.deepEqual((await call('GET', `/api/budgets/${id}/`)).body.name, 'team');
    assert.ok((await call('GET', '/api/budgets/')).body.results.some((r: { id: string }) => r.id === id));
  });

  it('shows the webhook secret once, and changes what is asked', async () => {
    const made = await call('POST', '/api/budgets/', {
      name: 'with hook',
      applies_to: { type: 'key', value: tenants.a.keyId },
      amount_usd: 5,
      period: 'total',
      alert_thresholds: [1, 0.5, 0.5],
      webhook_url: 'https://hooks.example.com/gatelog',
    });
    assert.equal(made.status, 201, made.text);
    assert.match(made.body.webhook_secret, /^whsec_[\w-]{43}$/);
    assert.deepEqual(made.body.alert_thresholds, [0.5, 1], 'sorted, once each');
    assert.equal(made.body.period_start, null);
    const read = await call('GET', `/api/budgets/${made.body.id}/`);
    assert.equal(read.body.webhook_secret, undefined, 'never shown again');
    const changed = await call('PATCH', `/api/budgets/${made.body.id}/`, {
      amount_usd: 7.5,
      tz: 'Asia/Tokyo',
      period: 'day',
    });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(
      [changed.body.amount_usd, changed.body.tz, changed.body.period, changed.body.webhook_url],
      [7.5, 'Asia/Tokyo', 'day', 'https://hooks.example.com/gatelog'],
    );
    assert.equal(changed.body.webhook_secret, undefined, 'the webhook kept its secret');
    assert.equal((await call('DELETE', `/api/budgets/${made.body.id}/`)).status, 204);
    assert.equal((await call('GET', `/api/budgets/${made.body.id}/`)).status, 404);
  });

  it('answers each bad input with a 400 naming its field', async () => {
    const base = { name: 'bad', applies_to: { type: 'customer', value: 'acme' }, amount_usd: 10 };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, amount_usd: 0 }, 'amount_usd'],
      [{ ...base, period: 'year' }, 'period'],
      [{ ...base, tz: 'Mars/Olympus_Mons' }, 'tz'],
      [{ ...base, alert_thresholds: [0] }, 'alert_thresholds.0'],
      [{ ...base, webhook_url: 'ftp://example.com/x' }, 'webhook_url'],
      [{ ...base, applies_to: { type: 'customer' } }, 'applies_to.value'],
      [{ ...base, applies_to: { type: 'key', value: tenants.b.keyId } }, 'applies_to.value'],
      [{ ...base, applies_to: { type: 'organization', value: tenants.b.org.id } }, 'applies_to.value'],
      [{ ...base, applies_to: { type: 'team', value: 'x' } }, 'applies_to.type'],
    ];
    for (const [body, param] of cases) {
      const res = await call('POST', '/api/budgets/', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.param, param, JSON.stringify(body));
    }
    assert.equal((await call('POST', '/api/budgets/', base)).status, 201);
    const twice = await call('POST', '/api/budgets/', base);
    assert.equal(twice.status, 409, twice.text);
    assert.equal(twice.body.error.code, 'budget_exists');
  });

  it("keeps each organization's budgets its own, and to admin keys", async () => {
    const bOnly = { name: 'b only', applies_to: { type: 'organization' }, amount_usd: 1 };
    const made = await madeByOther(tenants, '/api/budgets/', bOnly, { amount_usd: 2 });
    assert.equal((await call('GET', `/api/budgets/${made.body.id}/`, undefined, tenants.b.key)).body.amount_usd, 1);
    await refusedWithoutAdmin(tenants, '/api/budgets/');
  });
});
