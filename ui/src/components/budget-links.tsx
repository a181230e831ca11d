/**
 * The ways from a budget to its logs: its calls this period and the calls it refused (in the explorer),
 * its biggest spenders (the dashboard's top keys, customers and models over its calls). The window is
 * worked out when the link is followed, so a page left open for long still links to now.
 */
import type { ComponentChildren } from 'preact';
import { budgetQuery, type BudgetStanding, type BudgetView } from '../lib/budget-list';
import { go } from '../router';

interface Props {
  budget: BudgetStanding;
  view?: BudgetView;
  /** The link's accessible name, when its text is not enough out of context. */
  label?: string;
  title?: string;
  children: ComponentChildren;
}

export function BudgetLink({ budget, view = 'calls', label, title, children }: Props) {
  const query = budgetQuery(budget, Date.now(), view);
  return (
    <a
      href={query || './'}
      aria-label={label}
      title={title}
      onClick={(e) => {
        e.preventDefault();
        go(budgetQuery(budget, Date.now(), view));
      }}
    >
      {children}
    </a>
  );
}
