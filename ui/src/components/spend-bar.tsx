/**
 * A budget's current period as a bar: spent, reserved (held by calls in flight), the rest, with its
 * alert thresholds marked; the same in words for a screen reader (and on hover).
 */
import type { BudgetStanding } from '../lib/budget-list';
import { barParts, usdText } from '../lib/budget-list';

const percent = (fraction: number) => `${(fraction * 100).toFixed(2)}%`;

export function SpendBar({ budget }: { budget: BudgetStanding }) {
  const parts = barParts(budget);
  const words =
    `Spent ${usdText(budget.spent_usd)}, reserved ${usdText(budget.reserved_usd)}, ` +
    `${usdText(budget.remaining_usd)} left of ${usdText(budget.amount_usd)}`;
  return (
    <div class={`spend-bar${parts.over ? ' over' : ''}`} role="img" aria-label={words} title={words}>
      <span class="spent" data-part="spent" style={{ width: percent(parts.spent) }} />
      <span class="reserved" data-part="reserved" style={{ width: percent(parts.reserved) }} />
      <span class="rest" data-part="rest" style={{ width: percent(parts.rest) }} />
      {parts.marks.map((at) => (
        <span key={at} class="mark" style={{ left: percent(at) }} />
      ))}
    </div>
  );
}
