/**
 * What the budget form shows and sends (docs/api.md "Budgets"): a budget as the form's fields, what is
 * wrong with a typed amount or threshold before anything is sent, the fields as the body that makes a
 * budget, or as the change of one (only the fields that changed; what a budget applies to stays). The
 * thresholds are typed as percentages ("80, 100") and sent as the fractions the API takes ([0.8, 1]).
 * Pure.
 */

export const PERIODS = {
  day: 'Day (from local midnight)',
  week: 'Week (from Monday)',
  month: 'Month (from the 1st)',
  total: 'Total (never resets)',
} as const;
export type Period = keyof typeof PERIODS;

export const TARGETS = { key: 'A key', customer: 'A customer', organization: 'The organization' } as const;
export type TargetType = keyof typeof TARGETS;

/** The highest amount, and most thresholds and highest threshold (a fraction), the API takes (src/http/routes/budgets.ts). */
export const MAX_AMOUNT_USD = 1e9;
export const MAX_THRESHOLDS = 10;
export const MAX_THRESHOLD = 10;

/** The budget fields the form reads (the API's budget, without its standing). */
export interface BudgetFields {
  name: string;
  applies_to: { type: TargetType; value: string };
  amount_usd: number;
  period: Period;
  tz: string;
  alert_thresholds: number[];
  webhook_url: string | null;
  allow_unpriced: boolean;
}

/** The form as typed. */
export interface BudgetFormValues {
  name: string;
  type: TargetType;
  /** The key's id (a key budget). */
  keyId: string;
  /** The customer_identifier (a customer budget). */
  customer: string;
  /** Dollars as typed. */
  amount: string;
  period: Period;
  tz: string;
  /** Percentages as typed, comma-separated: "80, 100". */
  thresholds: string;
  /** '' for none. */
  webhook: string;
  allowUnpriced: boolean;
}

export const emptyBudgetForm = (): BudgetFormValues => ({
  name: '',
  type: 'key',
  keyId: '',
  customer: '',
  amount: '',
  period: 'month',
  tz: 'UTC',
  thresholds: '80, 100',
  webhook: '',
  allowUnpriced: false,
});

/** A number as typed: digits with at most one decimal point ("12", "12.5", ".5", "12."). */
const DECIMAL = /^(\d+\.?\d*|\.\d+)$/;

/** A fraction as the percentage typed for it: 0.8 → "80", 0.125 → "12.5" (no float noise: 0.07 → "7"). */
export const percentText = (fraction: number): string => String(Number((fraction * 100).toPrecision(12)));

/** Fractions as the form's text: [0.8, 1] → "80, 100". */
export const thresholdsText = (fractions: readonly number[]): string => fractions.map(percentText).join(', ');

/**
 * Typed percentages ("80, 100", "50%,90 %") as the fractions the API takes, in order, repeats dropped (as the
 * server keeps them); blank is none. Or what is wrong with them.
 */
export function thresholdsOf(text: string): { value: number[] } | { problem: string } {
  const pieces = text
    .split(',')
    .map((p) => p.trim().replace(/\s*%$/, ''))
    .filter((p) => p !== '');
  const fractions: number[] = [];
  for (const piece of pieces) {
    const n = Number(piece);
    if (!DECIMAL.test(piece) || !(n > 0)) return { problem: `'${piece}' is not a percentage above 0.` };
    if (n > MAX_THRESHOLD * 100) return { problem: `At most ${MAX_THRESHOLD * 100}% (${piece}% given).` };
    fractions.push(Number((n / 100).toPrecision(12)));
  }
  const value = [...new Set(fractions)].sort((a, b) => a - b);
  if (value.length > MAX_THRESHOLDS) return { problem: `At most ${MAX_THRESHOLDS} thresholds.` };
  return { value };
}

/** A typed amount of dollars ("50", "$12.50", "1,000"), or what is wrong with it. */
export function amountOf(text: string): { value: number } | { problem: string } {
  const typed = text.trim().replace(/^\$/, '').replaceAll(',', '');
  const n = Number(typed);
  if (!DECIMAL.test(typed) || !(n > 0)) return { problem: 'Give an amount in dollars above 0.' };
  if (n > MAX_AMOUNT_USD) return { problem: `At most $${MAX_AMOUNT_USD.toLocaleString('en-US')}.` };
  return { value: n };
}

/** The first field the API would refuse (its `param`) and why, said before anything is sent; null: none. */
export function budgetFormProblem(
  values: BudgetFormValues,
  editing = false,
): { param: string; message: string } | null {
  if (values.name.trim() === '') return { param: 'name', message: 'Give the budget a name.' };
  if (!editing && values.type === 'key' && values.keyId === '')
    return { param: 'applies_to.value', message: 'Choose the key.' };
  if (!editing && values.type === 'customer' && values.customer.trim() === '')
    return { param: 'applies_to.value', message: 'Give the customer_identifier of the customer.' };
  const amount = amountOf(values.amount);
  if ('problem' in amount) return { param: 'amount_usd', message: amount.problem };
  if (values.tz.trim() === '')
    return { param: 'tz', message: 'Give a time zone (an IANA name such as Europe/Berlin).' };
  const thresholds = thresholdsOf(values.thresholds);
  if ('problem' in thresholds) return { param: 'alert_thresholds', message: thresholds.problem };
  return null;
}

export function budgetFormOf(budget: BudgetFields): BudgetFormValues {
  const { type, value } = budget.applies_to;
  return {
    name: budget.name,
    type,
    keyId: type === 'key' ? value : '',
    customer: type === 'customer' ? value : '',
    amount: String(budget.amount_usd),
    period: budget.period,
    tz: budget.tz,
    thresholds: thresholdsText(budget.alert_thresholds),
    webhook: budget.webhook_url ?? '',
    allowUnpriced: budget.allow_unpriced,
  };
}

/** What the budget applies to, as the API takes it: an organization's budget names no value. */
function appliesToOf(values: BudgetFormValues) {
  if (values.type === 'organization') return { type: values.type };
  return { type: values.type, value: values.type === 'key' ? values.keyId : values.customer.trim() };
}

/** A checked field's value; one that is not (the form checks first) goes as typed, for the API to refuse by name. */
const valueOr = <T>(read: { value: T } | { problem: string }, typed: string): T | string =>
  'value' in read ? read.value : typed.trim();

/** The settings a budget can change (all but what it applies to). */
function settingsOf(values: BudgetFormValues) {
  return {
    name: values.name.trim(),
    amount_usd: valueOr(amountOf(values.amount), values.amount),
    period: values.period,
    tz: values.tz.trim(),
    alert_thresholds: valueOr(thresholdsOf(values.thresholds), values.thresholds),
    webhook_url: values.webhook.trim() === '' ? null : values.webhook.trim(),
    allow_unpriced: values.allowUnpriced,
  };
}

/** The body that makes a budget of these values. */
export const createBudgetBody = (values: BudgetFormValues) => {
  const { name, ...rest } = settingsOf(values);
  return { name, applies_to: appliesToOf(values), ...rest };
};

export type BudgetBody = ReturnType<typeof createBudgetBody>;
export type BudgetChange = Partial<ReturnType<typeof settingsOf>>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What changed of `budget` in the form: only those fields are sent (none: nothing to save). */
export function budgetChangeOf(budget: BudgetFields, values: BudgetFormValues): BudgetChange {
  const wanted = settingsOf(values);
  const change: BudgetChange = {};
  for (const field of Object.keys(wanted) as (keyof typeof wanted)[]) {
    if (!same(wanted[field], budget[field])) Object.assign(change, { [field]: wanted[field] });
  }
  return change;
}
