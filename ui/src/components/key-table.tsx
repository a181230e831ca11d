/**
 * The organization's keys as a table: who holds each, what it may do, when it was last used (how long
 * ago, the instant on hover), whether it still works, its own rate limits (in words on hover) and what
 * it has spent of its budgets this period (each a link to its calls). A revoked key is dimmed and says
 * so; a key in use is edited in place, rotated in a panel, revoked after asking.
 */
import type { ApiKey } from '../api-keys';
import { type BudgetStanding, spendText } from '../lib/budget-list';
import { agoText, keyState, limitsText } from '../lib/key-list';
import { BudgetLink } from './budget-links';
import { ConfirmButton } from './confirm-button';
import { TimeText } from './time-text';

interface Actions {
  onEdit(key: ApiKey): void;
  onRotate(key: ApiKey): void;
  onRevoke(key: ApiKey): Promise<void>;
}

const STATE_TEXT = { active: 'Active', revoked: 'Revoked', expired: 'Expired' } as const;

function Ago({ iso, now, never }: { iso: string | null; now: number; never: string }) {
  if (iso === null) return <span class="summary">{never}</span>;
  return (
    <time dateTime={iso} title={iso}>
      {agoText(iso, now)}
    </time>
  );
}

/** A key's budgets this period, one a line: "$12.40 of $50 this month", a link to the calls it counts. */
function KeyBudgets({ budgets }: { budgets: readonly BudgetStanding[] | null }) {
  // Not known (being read, or unreadable): nothing, rather than a "none" that may not be true.
  if (budgets === null) return null;
  if (budgets.length === 0) return <span class="summary">—</span>;
  return (
    <ul class="key-budgets">
      {budgets.map((b) => (
        <li key={b.id}>
          <BudgetLink budget={b} title={`Budget ${b.name}: its calls this period`}>
            {spendText(b)}
          </BudgetLink>
        </li>
      ))}
    </ul>
  );
}

interface RowProps {
  k: ApiKey;
  now: number;
  current: boolean;
  budgets: readonly BudgetStanding[] | null;
  actions: Actions;
}

function KeyRow({ k, now, current, budgets, actions }: RowProps) {
  const state = keyState(k, now);
  const owner = [k.owner.first_name, k.owner.last_name].filter(Boolean).join(' ');
  const limits = limitsText(k.rate_limits);
  return (
    <tr class={state === 'active' ? undefined : `key-${state}`} data-key-id={k.id}>
      <td data-label="Name">
        <strong>{k.name}</strong>
        {k.is_test && <span class="badge">test</span>}
        {current && <span class="badge">this key</span>}
      </td>
      <td data-label="Prefix">
        <code>{k.prefix}…</code>
      </td>
      <td data-label="Owner">
        {k.owner.email || owner ? `${owner}${owner && k.owner.email ? ' ' : ''}${k.owner.email}` : '—'}
      </td>
      <td data-label="Scopes">{k.scopes.join(', ')}</td>
      <td data-label="Models" class="wrap">
        {k.allowed_models.length ? k.allowed_models.join(', ') : <span class="summary">every model</span>}
      </td>
      <td data-label="Expires">
        {k.expires_at ? <TimeText iso={k.expires_at} /> : <span class="summary">never</span>}
      </td>
      <td data-label="Created">
        <TimeText iso={k.created_at} />
      </td>
      <td data-label="Last used">
        <Ago iso={k.last_used_at} now={now} never="never" />
      </td>
      <td data-label="State">
        <span class={`badge state-${state}`}>{STATE_TEXT[state]}</span>
        {k.revoked_at && (
          <span class="field-hint">
            <TimeText iso={k.revoked_at} />
          </span>
        )}
      </td>
      <td data-label="Limits" title={limits.words}>
        {limits.none ? <span class="summary">{limits.short}</span> : limits.short}
      </td>
      <td data-label="Budget">
        <KeyBudgets budgets={budgets} />
      </td>
      <td class="row-actions">
        {state !== 'revoked' && (
          <div class="key-actions">
            <button type="button" aria-label={`Edit key ${k.name}`} onClick={() => actions.onEdit(k)}>
              Edit
            </button>
            <button type="button" aria-label={`Rotate key ${k.name}`} onClick={() => actions.onRotate(k)}>
              Rotate
            </button>
            <ConfirmButton
              label={`Revoke key ${k.name}`}
              text="Revoke"
              confirm={current ? `Revoke ${k.name}, the key you are signed in with` : `Revoke ${k.name}`}
              onConfirm={() => actions.onRevoke(k)}
            />
          </div>
        )}
      </td>
    </tr>
  );
}

export function KeyTable({
  keys,
  now,
  currentId,
  editing,
  budgets,
  renderEdit,
  ...actions
}: Actions & {
  keys: ApiKey[];
  now: number;
  currentId: string;
  editing: string | null;
  /** Each key's budgets, by the key's id; null while not known. */
  budgets: ReadonlyMap<string, readonly BudgetStanding[]> | null;
  renderEdit(key: ApiKey): preact.ComponentChildren;
}) {
  const headers = [
    'Name',
    'Prefix',
    'Owner',
    'Scopes',
    'Models',
    'Expires',
    'Created',
    'Last used',
    'State',
    'Limits',
    'Budget',
  ];
  // Who and what wider; the times and the state narrower.
  const wide = new Set(['Name', 'Prefix', 'Owner', 'Models']);
  return (
    <div class="table-scroll">
      <table class="logs plain keys" aria-label="Keys">
        <colgroup>
          {headers.map((h) => (
            <col key={h} class={wide.has(h) ? 'k-wide' : undefined} />
          ))}
          <col class="k-actions" />
        </colgroup>
        <thead>
          <tr>
            {headers.map((h) => (
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
          {keys.map((k) =>
            editing === k.id ? (
              <tr key={k.id} data-key-id={k.id}>
                <td colSpan={headers.length + 1}>{renderEdit(k)}</td>
              </tr>
            ) : (
              <KeyRow
                key={k.id}
                k={k}
                now={now}
                current={k.id === currentId}
                budgets={budgets && (budgets.get(k.id) ?? [])}
                actions={actions}
              />
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}
