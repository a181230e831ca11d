/**
 * The ways from a budget to its logs in the explorer: its calls this period, and the calls it refused.
 * The window is worked out when the link is followed, so a page left open still links to now.
 */
import type { ComponentChildren } from 'preact';
import { budgetLogsQuery, type BudgetStanding } from '../lib/budget-list';
import { go } from '../router';

interface Props {
  budget: BudgetStanding;
  /** The name of the key a key budget applies to (its logs carry it); null when not known. */
  keyName: string | null;
  refused?: boolean;
  /** The link's accessible name, when its text is not enough out of context. */
  label?: string;
  title?: string;
  children: ComponentChildren;
}

export function BudgetLogsLink({ budget, keyName, refused = false, label, title, children }: Props) {
  const query = budgetLogsQuery(budget, keyName, Date.now(), refused);
  if (query === null) return <span class="summary">{children}</span>;
  return (
    <a
      href={query || './'}
      aria-label={label}
      title={title}
      onClick={(e) => {
        e.preventDefault();
        go(budgetLogsQuery(budget, keyName, Date.now(), refused) ?? query);
      }}
    >
      {children}
    </a>
  );
}
