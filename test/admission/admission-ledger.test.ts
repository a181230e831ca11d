/**
 * A call's admission taken all or none (src/admission/admission-ledger.ts): budgets' reservations and
 * rate-limit draws in one statement (PostgreSQL) or one transaction (SQLite). A step that does not fit
 * leaves every step before it given back — the budget's reservation and its row, a bucket's draw.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdmissionLedger } from '../../src/admission/admission-ledger.js';
import type { AdmissionStep, BucketStep, BudgetStep } from '../../src/admission/steps.js';
import { Ledger } from '../../src/budgets/ledger.js';
import { Buckets } from '../../src/limits/buckets.js';
import { WINDOW_MS } from '../../src/limits/draw.js';
import { api } from '../support/harness.js';
import { type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

describe('a call admission taken all or none', () => {
  let p: ProxyTestApp;
  let admission: AdmissionLedger;
  let budgetId: string;
  let calls = 0;

  before(async () => {
    p = await startProxyApp();
    admission = new AdmissionLedger(p.t.db, new Ledger(p.t.db), new Buckets(p.t.db));
    const budget = await api(p.t.baseUrl, 'POST', '/api/budgets/', {
      key: p.a.key,
      body: { name: 'all or none', applies_to: { type: 'organization' }, amount_usd: 1, period: 'total' },
    });
    assert.equal(budget.status, 201, budget.text);
    budgetId = budget.body.id as string;
  });
  after(async () => {
    await p?.close();
  });

  /** A reservation of `amount` of the budget (a budget of $1). */
  const reserve = (amount: number): BudgetStep => ({
    kind: 'budget',
    reservation: {
      id: `call-${++calls}:${budgetId}`,
      budgetId,
      periodStart: 0,
      amount,
      expiresAt: Date.now() + 60_000,
    },
    limit: 1,
  });
  /** One request from `bucket`, a limit of one request a minute. */
  const drawOne = (bucket: string, now: number): BucketStep => ({
    kind: 'bucket',
    bucket,
    now,
    draw: { requestsMs: WINDOW_MS, tokensMs: 0 },
    limit: now + WINDOW_MS,
  });
  const period = async () => {
    const row = await p.t.db.db
      .selectFrom('budget_periods')
      .select(['spent_usd', 'reserved_usd'])
      .where('budget_id', '=', budgetId)
      .executeTakeFirst();
    const held = await p.t.db.db.selectFrom('budget_reservations').select('id').execute();
    return { reserved: Number(row?.reserved_usd ?? 0), rows: held.length };
  };
  const requestsAt = async (bucket: string) => {
    const row = await p.t.db.db
      .selectFrom('rate_buckets')
      .select('requests_at')
      .where('bucket', '=', bucket)
      .executeTakeFirst();
    return row === undefined ? null : Number(row.requests_at);
  };

  it('takes every step, each with its standing', async () => {
    const now = Date.now();
    const taken = await admission.take([reserve(0.4), drawOne('key:a', now)]);
    assert.ok(taken.taken);
    assert.deepEqual(taken.results, [
      { spent: 0, reserved: 0.4 },
      { requestsAt: now + WINDOW_MS, tokensAt: now },
    ]);
    assert.deepEqual(await period(), { reserved: 0.4, rows: 1 });
  });

  it('a limit that refuses leaves the budget as it was: no reservation, no row', async () => {
    const refused = await admission.take([reserve(0.4), drawOne('key:a', Date.now())]);
    assert.deepEqual(refused, { taken: false, refusedAt: 1 });
    assert.deepEqual(await period(), { reserved: 0.4, rows: 1 });
  });

  it('a later limit that refuses gives back the draw of an earlier one', async () => {
    const now = Date.now();
    const before = await requestsAt('key:b');
    const steps: AdmissionStep[] = [drawOne('key:b', now), drawOne('key:a', now)];
    assert.deepEqual(await admission.take(steps), { taken: false, refusedAt: 1 });
    const after = await requestsAt('key:b');
    // Never drawn (rolled back), or drawn and moved back to where it was: empty at `now`.
    assert.ok(after === before || (after !== null && after <= now + 1e-6), `key:b stands at ${after}`);
    assert.ok((await admission.take([drawOne('key:b', now)])).taken, 'key:b still has its one request');
  });

  it('a budget that cannot hold the reservation refuses before anything is taken', async () => {
    const now = Date.now();
    const steps: AdmissionStep[] = [reserve(0.7), drawOne('key:c', now)];
    assert.deepEqual(await admission.take(steps), { taken: false, refusedAt: 0 });
    assert.deepEqual(await period(), { reserved: 0.4, rows: 1 });
    assert.equal(await requestsAt('key:c'), null);
    // More than the whole budget: refused without asking the database.
    assert.deepEqual(await admission.take([reserve(2)]), { taken: false, refusedAt: 0 });
    // What is left fits exactly.
    assert.ok((await admission.take([reserve(0.6)])).taken);
    assert.deepEqual(await period(), { reserved: 1, rows: 2 });
  });

  it('calls asked at once are each taken or refused on their own, a refusal undoing only its own steps', async () => {
    const now = Date.now();
    // A limit of three requests a minute, drawn by six calls at once.
    const drawThird: BucketStep = { ...drawOne('key:d', now), draw: { requestsMs: WINDOW_MS / 3, tokensMs: 0 } };
    const crowd = Array.from({ length: 6 }, () => admission.take([drawThird]));
    // Among them a call whose draw fits but whose reservation does not (the budget is full).
    const refused = admission.take([drawOne('key:e', now), reserve(0.1)]);
    const results = await Promise.all(crowd);
    assert.equal(results.filter((r) => r.taken).length, 3);
    assert.deepEqual(
      results.filter((r) => !r.taken),
      [0, 1, 2].map(() => ({ taken: false, refusedAt: 0 })),
    );
    assert.deepEqual(await refused, { taken: false, refusedAt: 1 });
    assert.ok((await admission.take([drawOne('key:e', now)])).taken, 'key:e still has its one request');
    assert.deepEqual(await period(), { reserved: 1, rows: 2 });
  });
});
