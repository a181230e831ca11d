/**
 * The calls of the Budgets page (docs/api.md "Budgets"): list, make, change and remove the
 * organization's budgets, each read with its current period's spend. The webhook's secret is in the
 * answer that made the budget with a webhook, or added one, only.
 */
import { call, type Paged } from './api';
import type { BudgetBody, BudgetChange } from './lib/budget-form';
import type { BudgetStanding } from './lib/budget-list';

/** A budget as the API reads it. */
export interface Budget extends BudgetStanding {
  updated_at: string;
}

/** The answer that makes or changes a budget: the secret when a webhook was just given one. */
export type BudgetWithSecret = Budget & { webhook_secret?: string };

const at = (id: string) => `budgets/${encodeURIComponent(id)}/`;
const PAGE_SIZE = 100;

/** Every budget of the organization, oldest first: page after page until the count is reached. */
export async function listBudgets(key: string): Promise<Budget[]> {
  const budgets: Budget[] = [];
  for (let page = 1; ; page++) {
    const answer = await call<Paged<Budget>>(key, 'GET', `budgets/?page=${page}&page_size=${PAGE_SIZE}`);
    budgets.push(...answer.results);
    if (answer.results.length === 0 || budgets.length >= answer.count) return budgets;
  }
}

export const createBudget = (key: string, body: BudgetBody) => call<BudgetWithSecret>(key, 'POST', 'budgets/', body);

export const patchBudget = (key: string, id: string, body: BudgetChange) =>
  call<BudgetWithSecret>(key, 'PATCH', at(id), body);

export const deleteBudget = (key: string, id: string) => call<null>(key, 'DELETE', at(id));
