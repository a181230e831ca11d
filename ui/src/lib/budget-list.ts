/**
 * How budgets read in the UI: amounts in dollars, a budget's current period as a bar (spent, reserved,
 * the rest) and in words ("$12.40 of $50 this month"), what it applies to, and its calls in the explorer —
 * the logs of what it applies to since its period began — and on the dashboard. Pure.
 */
import type { BudgetFields, Period } from './budget-form.js';
import { costText } from './format.js';
import { dashboardQuery } from './summary.js';
import { type Condition, DEFAULT_SORT, formatViewState, type TimeWindow } from './view-state.js';

/** A budget as the API reads it: its settings and its current period's standing. */
export interface BudgetStanding extends BudgetFields {
  id: string;
  spent_usd: number;
  reserved_usd: number;
  remaining_usd: number;
  /** Null for a total budget. */
  period_start: string | null;
  period_end: string | null;
  created_at: string;
}

/**
 * Dollars as a budget reads them: cents from $1 up ("$12.40", "$1,250.50"), whole dollars without them
 * ("$50"); below $1, three significant digits as costs read ($0.00400), so a small spend is never "$0.00".
 */
export function usdText(usd: number): string {
  if (!Number.isFinite(usd)) return '—';
  const size = Math.abs(usd);
  if (size === 0 || size < 1) return costText(usd);
  const whole = Number.isInteger(Math.round(size * 100) / 100);
  return `${usd < 0 ? '-' : ''}$${size.toLocaleString('en-US', {
    minimumFractionDigits: whole ? 0 : 2,
    maximumFractionDigits: 2,
  })}`;
}

const PHRASES: Record<Period, string> = { day: 'today', week: 'this week', month: 'this month', total: 'in total' };

/** A budget's period in a word, with its time zone when not UTC: "Month", "Day (Europe/Berlin)". */
export function periodText(b: Pick<BudgetFields, 'period' | 'tz'>): string {
  const name = b.period[0].toUpperCase() + b.period.slice(1);
  return b.tz === 'UTC' || b.period === 'total' ? name : `${name} (${b.tz})`;
}

/** What a budget has spent, in words: "$12.40 of $50 this month". */
export const spendText = (b: Pick<BudgetStanding, 'spent_usd' | 'amount_usd' | 'period'>): string =>
  `${usdText(b.spent_usd)} of ${usdText(b.amount_usd)} ${PHRASES[b.period]}`;

/** The thresholds as percentages: "80%, 100%"; "none". */
export const thresholdsShown = (fractions: readonly number[]): string =>
  fractions.length === 0 ? 'none' : fractions.map((f) => `${Number((f * 100).toPrecision(12))}%`).join(', ');

/**
 * The bar's parts, as fractions of its length: spent, reserved, the rest. The bar is the amount, or what
 * is spent and held when that is more (a call may cost a little more than its reservation). The
 * thresholds are marked where they fall on it.
 */
export function barParts(b: Pick<BudgetStanding, 'spent_usd' | 'reserved_usd' | 'amount_usd' | 'alert_thresholds'>) {
  const spent = Math.max(0, b.spent_usd);
  const reserved = Math.max(0, b.reserved_usd);
  const whole = Math.max(b.amount_usd, spent + reserved) || 1;
  const rest = Math.max(0, b.amount_usd - spent - reserved);
  return {
    spent: spent / whole,
    reserved: reserved / whole,
    rest: rest / whole,
    marks: b.alert_thresholds.map((t) => (t * b.amount_usd) / whole).filter((at) => at <= 1),
    over: spent + reserved > b.amount_usd,
  };
}

/** The keys a budget's row names: by id. */
export interface NamedKey {
  id: string;
  name: string;
  revoked_at: string | null;
}

/** What a budget applies to, in words: the key's name, the customer, or "Organization". */
export function targetText(b: Pick<BudgetFields, 'applies_to'>, keys: ReadonlyMap<string, NamedKey>): string {
  const { type, value } = b.applies_to;
  if (type === 'organization') return 'Organization';
  if (type === 'customer') return `Customer ${value}`;
  const key = keys.get(value);
  if (!key) return `Key ${value}`;
  return `Key ${key.name}${key.revoked_at ? ' (revoked)' : ''}`;
}

/** Each key's budgets, by the key's id: what the Keys page shows on a key's row. */
export function budgetsByKey<B extends Pick<BudgetFields, 'applies_to'>>(budgets: readonly B[]): Map<string, B[]> {
  const byKey = new Map<string, B[]>();
  for (const b of budgets) {
    if (b.applies_to.type !== 'key') continue;
    byKey.set(b.applies_to.value, [...(byKey.get(b.applies_to.value) ?? []), b]);
  }
  return byKey;
}

/**
 * The explorer's filter for what a budget applies to: a key by its id (`api_key_id`: its calls across
 * renames and rotations), a customer by customer_identifier, the organization by none.
 */
export function targetConditions(b: Pick<BudgetFields, 'applies_to'>): Condition[] {
  const { type, value } = b.applies_to;
  if (type === 'organization') return [];
  if (type === 'customer') return [{ field: 'customer_identifier', operator: '', values: [value] }];
  return [{ field: 'api_key_id', operator: '', values: [value] }];
}

/**
 * The explorer's window for a budget's calls: its current period (to the period's end, so the link stays
 * the same all period long and shows a new call on reload), or for a total budget, from when it was
 * made until now.
 */
export function budgetWindow(
  b: Pick<BudgetStanding, 'period_start' | 'period_end' | 'created_at'>,
  now: number,
): TimeWindow {
  if (b.period_start !== null && b.period_end !== null)
    return { kind: 'absolute', from: b.period_start, to: b.period_end };
  const to = new Date(Math.max(now, Date.parse(b.created_at))).toISOString();
  return { kind: 'absolute', from: b.created_at, to };
}

/** Where a budget's link goes: its calls, the calls it refused, or the dashboard of its calls (top keys, customers, models). */
export type BudgetView = 'calls' | 'refused' | 'spenders';

/**
 * The query string of a budget's calls this period: in the explorer (`calls`), those it refused
 * (`refused`: error_code budget_exceeded, and the budget's name in the message, which names the budget
 * that refused), or on the dashboard, whose top lists rank its biggest spenders (`spenders`).
 */
export function budgetQuery(
  b: Pick<BudgetStanding, 'name' | 'applies_to' | 'period_start' | 'period_end' | 'created_at'>,
  now: number,
  view: BudgetView = 'calls',
): string {
  const target = targetConditions(b);
  const window = budgetWindow(b, now);
  if (view === 'spenders') return dashboardQuery({ window, conditions: target });
  const conditions: Condition[] =
    view === 'refused'
      ? [
          ...target,
          { field: 'error_code', operator: '', values: ['budget_exceeded'] },
          { field: 'error_message', operator: 'contains', values: [`'${b.name}'`] },
        ]
      : target;
  return formatViewState({ window, conditions, sort: DEFAULT_SORT, page: 1, log: null });
}
