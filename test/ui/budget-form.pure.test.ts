/**
 * The Budgets page's pure pieces: the form's values as the body that makes a budget (thresholds typed as
 * percentages, sent as fractions) and as the change of one (only what changed), what is wrong with a
 * typed value said before anything is sent, and how a budget reads: dollars, its spend in words and as
 * a bar, what it applies to, and the explorer's link to its calls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  amountOf,
  budgetChangeOf,
  type BudgetFields,
  budgetFormOf,
  budgetFormProblem,
  type BudgetFormValues,
  createBudgetBody,
  emptyBudgetForm,
  percentText,
  thresholdsOf,
  thresholdsText,
} from '../../ui/src/lib/budget-form.js';
import {
  barParts,
  budgetQuery,
  budgetsByKey,
  type BudgetStanding,
  periodText,
  spendText,
  targetText,
  thresholdsShown,
  usdText,
} from '../../ui/src/lib/budget-list.js';
import { formatScreen, parseScreen } from '../../ui/src/lib/screen.js';
import { parseViewState } from '../../ui/src/lib/view-state.js';

const form = (over: Partial<BudgetFormValues> = {}): BudgetFormValues => ({
  ...emptyBudgetForm(),
  name: ' dev-7 monthly ',
  keyId: 'key-1',
  amount: '50',
  ...over,
});

const budget = (over: Partial<BudgetStanding> = {}): BudgetStanding => ({
  id: 'b1',
  name: 'dev-7 monthly',
  applies_to: { type: 'key', value: 'key-1' },
  amount_usd: 50,
  period: 'month',
  tz: 'UTC',
  alert_thresholds: [0.8, 1],
  webhook_url: null,
  allow_unpriced: false,
  spent_usd: 12.4,
  reserved_usd: 10,
  remaining_usd: 27.6,
  period_start: '2026-11-01T00:00:00.000Z',
  period_end: '2026-12-01T00:00:00.000Z',
  created_at: '2026-10-15T08:00:00.000Z',
  ...over,
});

describe('the budget form', () => {
  it('makes the body of a new budget: thresholds as fractions, a blank webhook as none', () => {
    assert.deepEqual(createBudgetBody(form({ thresholds: '80, 100', amount: '$12.50' })), {
      name: 'dev-7 monthly',
      applies_to: { type: 'key', value: 'key-1' },
      amount_usd: 12.5,
      period: 'month',
      tz: 'UTC',
      alert_thresholds: [0.8, 1],
      webhook_url: null,
      allow_unpriced: false,
    });
    const customer = createBudgetBody(
      form({
        type: 'customer',
        customer: ' acme ',
        period: 'day',
        tz: ' Europe/Berlin ',
        webhook: ' https://a.test/h ',
      }),
    );
    assert.deepEqual(customer.applies_to, { type: 'customer', value: 'acme' });
    assert.deepEqual(
      [customer.period, customer.tz, customer.webhook_url],
      ['day', 'Europe/Berlin', 'https://a.test/h'],
    );
    assert.deepEqual(
      createBudgetBody(form({ type: 'organization', thresholds: '', allowUnpriced: true })),
      {
        name: 'dev-7 monthly',
        applies_to: { type: 'organization' },
        amount_usd: 50,
        period: 'month',
        tz: 'UTC',
        alert_thresholds: [],
        webhook_url: null,
        allow_unpriced: true,
      },
      "an organization's budget names no value; no thresholds is none",
    );
  });

  it('reads thresholds typed as percentages, in order, repeats dropped, without float noise', () => {
    assert.deepEqual(thresholdsOf('50%, 90 %,50, 7'), { value: [0.07, 0.5, 0.9] });
    assert.deepEqual(thresholdsOf(' , '), { value: [] });
    assert.deepEqual(thresholdsOf('12.5, 150, 1000'), { value: [0.125, 1.5, 10] });
    for (const [typed, problem] of [
      ['80, lots', /'lots' is not a percentage/],
      ['0', /'0' is not a percentage above 0/],
      ['-5', /'-5' is not a percentage/],
      ['1001', /At most 1000%/],
      ['1,2,3,4,5,6,7,8,9,10,11', /At most 10 thresholds/],
    ] as const) {
      const read = thresholdsOf(typed);
      assert.ok('problem' in read, typed);
      assert.match(read.problem, problem);
    }
    assert.equal(percentText(0.07), '7');
    assert.equal(thresholdsText([0.8, 1, 0.125]), '80, 100, 12.5');
  });

  it('reads an amount in dollars, and says what is wrong with one', () => {
    assert.deepEqual(amountOf(' $1,250.50 '), { value: 1250.5 });
    assert.deepEqual(amountOf('.5'), { value: 0.5 });
    for (const typed of ['', '0', '-5', 'ten', '1e3', '1.2.3']) {
      assert.deepEqual(amountOf(typed), { problem: 'Give an amount in dollars above 0.' }, typed);
    }
    assert.deepEqual(amountOf('2000000000'), { problem: 'At most $1,000,000,000.' });
  });

  it('says the first field at fault, by the name the API would give it, before sending', () => {
    assert.equal(budgetFormProblem(form()), null);
    assert.deepEqual(budgetFormProblem(form({ name: ' ', amount: '' })), {
      param: 'name',
      message: 'Give the budget a name.',
    });
    assert.equal(budgetFormProblem(form({ keyId: '' }))?.param, 'applies_to.value', 'a key is chosen');
    assert.equal(budgetFormProblem(form({ type: 'customer', customer: '  ' }))?.param, 'applies_to.value');
    assert.equal(budgetFormProblem(form({ type: 'organization', keyId: '' })), null);
    assert.equal(budgetFormProblem(form({ keyId: '' }), true), null, 'a budget edited keeps what it applies to');
    assert.equal(budgetFormProblem(form({ amount: '0' }))?.param, 'amount_usd');
    assert.equal(budgetFormProblem(form({ tz: ' ' }))?.param, 'tz');
    const thresholds = budgetFormProblem(form({ thresholds: '80, x' }));
    assert.equal(thresholds?.param, 'alert_thresholds');
    assert.match(thresholds!.message, /'x' is not a percentage/);
  });

  it('sends only what changed of a budget; thresholds compared as the fractions they are', () => {
    const before: BudgetFields = budget({ webhook_url: 'https://a.test/h', tz: 'Europe/Berlin' });
    const values = budgetFormOf(before);
    assert.deepEqual(
      [values.type, values.keyId, values.amount, values.thresholds, values.webhook],
      ['key', 'key-1', '50', '80, 100', 'https://a.test/h'],
    );
    assert.deepEqual(budgetChangeOf(before, values), {}, 'nothing changed');
    assert.deepEqual(budgetChangeOf(before, { ...values, thresholds: '100%, 80' }), {}, 'the same thresholds');
    assert.deepEqual(budgetChangeOf(before, { ...values, amount: '75', thresholds: '50' }), {
      amount_usd: 75,
      alert_thresholds: [0.5],
    });
    assert.deepEqual(budgetChangeOf(before, { ...values, webhook: ' ', period: 'week' }), {
      period: 'week',
      webhook_url: null,
    });
    assert.deepEqual(budgetChangeOf(before, { ...values, customer: 'acme', keyId: 'other' }), {}, 'never applies_to');
  });
});

describe('a budget as it reads', () => {
  it('writes dollars with cents from $1, whole dollars bare, small sums to three digits', () => {
    assert.deepEqual([12.4, 50, 1250.5, 49.999, 0, 0.004, 0.000036, -3].map(usdText), [
      '$12.40',
      '$50',
      '$1,250.50',
      '$50',
      '$0',
      '$0.00400',
      '$0.0000360',
      '-$3',
    ]);
    assert.equal(spendText(budget()), '$12.40 of $50 this month');
    assert.equal(spendText(budget({ period: 'day', spent_usd: 0 })), '$0 of $50 today');
    assert.equal(spendText(budget({ period: 'total', spent_usd: 4 })), '$4 of $50 in total');
    assert.equal(thresholdsShown([0.8, 1]), '80%, 100%');
    assert.equal(thresholdsShown([]), 'none');
  });

  it('names its period, with the time zone when not UTC', () => {
    assert.equal(periodText(budget()), 'Month');
    assert.equal(periodText(budget({ period: 'day', tz: 'Europe/Berlin' })), 'Day (Europe/Berlin)');
    assert.equal(periodText(budget({ period: 'total', tz: 'Europe/Berlin' })), 'Total', 'no day begins');
  });

  it('draws spent, reserved and the rest against the amount, with the thresholds marked', () => {
    const parts = barParts(budget({ spent_usd: 10, reserved_usd: 15, amount_usd: 50, alert_thresholds: [0.8, 1, 2] }));
    assert.deepEqual(parts, { spent: 0.2, reserved: 0.3, rest: 0.5, marks: [0.8, 1], over: false });
    const over = barParts(budget({ spent_usd: 48, reserved_usd: 12, amount_usd: 50, alert_thresholds: [1] }));
    assert.deepEqual([over.spent, over.reserved, over.rest, over.over], [0.8, 0.2, 0, true], 'past its amount');
    assert.deepEqual(over.marks, [50 / 60]);
  });

  it('says what it applies to, a key by its name', () => {
    const keys = new Map([
      ['key-1', { id: 'key-1', name: 'dev-7', revoked_at: null }],
      ['key-2', { id: 'key-2', name: 'old', revoked_at: '2026-01-01T00:00:00.000Z' }],
    ]);
    assert.equal(targetText(budget(), keys), 'Key dev-7');
    assert.equal(targetText(budget({ applies_to: { type: 'key', value: 'key-2' } }), keys), 'Key old (revoked)');
    assert.equal(targetText(budget({ applies_to: { type: 'key', value: 'gone' } }), keys), 'Key gone');
    assert.equal(targetText(budget({ applies_to: { type: 'customer', value: 'acme' } }), keys), 'Customer acme');
    assert.equal(targetText(budget({ applies_to: { type: 'organization', value: 'org' } }), keys), 'Organization');
    const byKey = budgetsByKey([
      budget({ id: 'a' }),
      budget({ id: 'b', applies_to: { type: 'customer', value: 'key-1' } }),
      budget({ id: 'c' }),
    ]);
    assert.deepEqual(
      [...byKey].map(([id, bs]) => [id, bs.map((b) => b.id)]),
      [['key-1', ['a', 'c']]],
    );
  });

  it('links to its calls in the explorer, and on the dashboard: what it applies to, over its period', () => {
    const now = Date.parse('2026-11-20T00:00:00.000Z');
    const state = (query: string | null) => {
      assert.ok(query !== null);
      return parseViewState(query);
    };
    const key = state(budgetQuery(budget(), now));
    assert.deepEqual(key.window, {
      kind: 'absolute',
      from: '2026-11-01T00:00:00.000Z',
      to: '2026-12-01T00:00:00.000Z',
    });
    // A key by its id: its calls across its renames and rotations.
    assert.deepEqual(key.conditions, [{ field: 'api_key_id', operator: '', values: ['key-1'] }]);

    const customer = state(budgetQuery(budget({ applies_to: { type: 'customer', value: 'acme' } }), now));
    assert.deepEqual(customer.conditions, [{ field: 'customer_identifier', operator: '', values: ['acme'] }]);
    const total = budget({
      applies_to: { type: 'organization', value: 'org' },
      period: 'total',
      period_start: null,
      period_end: null,
    });
    const org = state(budgetQuery(total, now));
    assert.deepEqual(org.conditions, []);
    assert.deepEqual(org.window, {
      kind: 'absolute',
      from: '2026-10-15T08:00:00.000Z',
      to: '2026-11-20T00:00:00.000Z',
    });

    const refused = state(budgetQuery(budget(), now, 'refused'));
    assert.deepEqual(refused.conditions.slice(1), [
      { field: 'error_code', operator: '', values: ['budget_exceeded'] },
      { field: 'error_message', operator: 'contains', values: ["'dev-7 monthly'"] },
    ]);

    // The dashboard over the same calls: its top keys, customers and models are the biggest spenders.
    const spenders = budgetQuery(budget(), now, 'spenders');
    assert.ok(spenders !== null);
    assert.deepEqual(parseScreen(spenders), { kind: 'dashboard' });
    assert.deepEqual(parseViewState(spenders).conditions, key.conditions);
    assert.deepEqual(parseViewState(spenders).window, key.window);
  });

  it('has a screen of its own in the URL', () => {
    assert.equal(formatScreen({ kind: 'budgets' }), '?v=budgets');
    assert.deepEqual(parseScreen('?v=budgets'), { kind: 'budgets' });
  });
});
