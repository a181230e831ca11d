/**
 * The organization's budgets as a table: each one's name, what it applies to, its period, this period's
 * spend as a bar with the amount in words, what remains, when the period ends, its alerts; its calls,
 * the calls it refused and its biggest spenders one click away; edited in place, removed after asking.
 */
import type { Budget } from '../api-budgets';
import { type NamedKey, periodText, spendText, targetText, thresholdsShown, usdText } from '../lib/budget-list';
import { agoText } from '../lib/key-list';
import { BudgetLink } from './budget-links';
import { ConfirmButton } from './confirm-button';
import { SpendBar } from './spend-bar';
import { TimeText } from './time-text';

interface Actions {
  onEdit(budget: Budget): void;
  onDelete(budget: Budget): Promise<void>;
}

const HEADERS = ['Name', 'Applies to', 'Period', 'Spent', 'Remaining', 'Period ends', 'Alerts'];

function Ends({ iso, now }: { iso: string | null; now: number }) {
  if (iso === null) return <span class="summary">never (total)</span>;
  return (
    <>
      <TimeText iso={iso} />
      <span class="field-hint">{agoText(iso, now)}</span>
    </>
  );
}

function BudgetRow({
  b,
  keys,
  now,
  actions,
}: {
  b: Budget;
  keys: ReadonlyMap<string, NamedKey>;
  now: number;
  actions: Actions;
}) {
  return (
    <tr data-budget-id={b.id}>
      <td data-label="Name">
        <strong>{b.name}</strong>
      </td>
      <td data-label="Applies to">{targetText(b, keys)}</td>
      <td data-label="Period">{periodText(b)}</td>
      <td data-label="Spent" class="budget-spend">
        <SpendBar budget={b} />
        <span class="budget-spend-text">{spendText(b)}</span>
        {b.reserved_usd > 0 && <span class="field-hint">{usdText(b.reserved_usd)} reserved by calls in flight</span>}
      </td>
      <td data-label="Remaining">{usdText(b.remaining_usd)}</td>
      <td data-label="Period ends">
        <Ends iso={b.period_end} now={now} />
      </td>
      <td data-label="Alerts">
        {thresholdsShown(b.alert_thresholds)}
        <span class="field-hint">{b.webhook_url ? 'to the webhook' : 'no webhook'}</span>
        {b.allow_unpriced && <span class="badge">unpriced allowed</span>}
      </td>
      <td class="row-actions">
        <div class="key-actions">
          <BudgetLink budget={b} label={`Calls of budget ${b.name}`}>
            Calls
          </BudgetLink>
          <BudgetLink budget={b} view="refused" label={`Calls refused by budget ${b.name}`}>
            Refused
          </BudgetLink>
          <BudgetLink budget={b} view="spenders" label={`Biggest spenders of budget ${b.name}`}>
            Spenders
          </BudgetLink>
          <button type="button" aria-label={`Edit budget ${b.name}`} onClick={() => actions.onEdit(b)}>
            Edit
          </button>
          <ConfirmButton
            label={`Delete budget ${b.name}`}
            confirm={`Delete ${b.name}`}
            onConfirm={() => actions.onDelete(b)}
          />
        </div>
      </td>
    </tr>
  );
}

export function BudgetTable({
  budgets,
  keys,
  now,
  editing,
  renderEdit,
  ...actions
}: Actions & {
  budgets: Budget[];
  keys: ReadonlyMap<string, NamedKey>;
  now: number;
  editing: string | null;
  renderEdit(budget: Budget): preact.ComponentChildren;
}) {
  return (
    <div class="table-scroll">
      <table class="logs plain budgets" aria-label="Budgets">
        <colgroup>
          {HEADERS.map((h) => (
            <col key={h} class={h === 'Spent' ? 'b-spend' : undefined} />
          ))}
          <col class="b-actions" />
        </colgroup>
        <thead>
          <tr>
            {HEADERS.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {budgets.map((b) =>
            editing === b.id ? (
              <tr key={b.id} data-budget-id={b.id}>
                <td colSpan={HEADERS.length + 1}>{renderEdit(b)}</td>
              </tr>
            ) : (
              <BudgetRow key={b.id} b={b} keys={keys} now={now} actions={actions} />
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}
