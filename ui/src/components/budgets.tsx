/**
 * The Budgets page (`?v=budgets`): the organization's budgets, each with this period's spend against its
 * amount; a budget made (its webhook's secret shown once), changed or removed. The keys are listed once,
 * to name the key a budget applies to and to offer them in the form. A signed-in key without the admin
 * scope is told so plainly instead.
 */
import { useState } from 'preact/hooks';
import { type ApiKey, listKeys } from '../api-keys';
import { type BudgetWithSecret, deleteBudget, listBudgets } from '../api-budgets';
import { lacks } from '../lib/key-list';
import { type Loaded, useLoad } from '../use-load';
import { BudgetForm } from './budget-form';
import { BudgetTable } from './budget-table';
import { asApiError } from './field-error';
import { NeedsScope } from './needs-scope';
import { OneTimeSecret } from './one-time-secret';
import { SidePanel } from './side-panel';
import '../pages.css';
import '../budgets.css';

export function Budgets({ apiKey, current }: { apiKey: string; current: Loaded<ApiKey | null> }) {
  if (current.state === 'loading') return <p class="summary">Loading…</p>;
  // Not known (an error): the page tries, and the list says what the API answers.
  const me = current.state === 'done' ? current.value : null;
  if (me && lacks(me.scopes, 'admin')) return <NeedsScope page="Budgets" scope="admin" keyName={me.name} />;
  return <BudgetList apiKey={apiKey} />;
}

/** A webhook's secret, the one time the API gives it. */
function WebhookSecret({
  budget,
  onClose,
}: {
  budget: BudgetWithSecret & { webhook_secret: string };
  onClose(): void;
}) {
  return (
    <SidePanel label="Webhook secret" title={`Budget ${budget.name}: its webhook's secret`} onClose={onClose}>
      <div class="stack">
        <p>
          Alerts to <code>{budget.webhook_url}</code> are signed with this secret (<code>X-Gatelog-Signature</code>):
          check the signature before trusting an alert.
        </p>
        <OneTimeSecret
          secret={budget.webhook_secret}
          label={`Webhook secret of ${budget.name}`}
          ifLost="A lost secret means removing the webhook, saving, and adding it again: it then gets a new one."
        />
        <button type="button" onClick={onClose}>
          Done
        </button>
      </div>
    </SidePanel>
  );
}

const hasSecret = (b: BudgetWithSecret): b is BudgetWithSecret & { webhook_secret: string } =>
  typeof b.webhook_secret === 'string';

function BudgetList({ apiKey }: { apiKey: string }) {
  const [loaded, reload] = useLoad(() => listBudgets(apiKey), [apiKey]);
  const [keysLoaded] = useLoad(() => listKeys(apiKey), [apiKey]);
  const [editing, setEditing] = useState<string | null>(null);
  const [secret, setSecret] = useState<(BudgetWithSecret & { webhook_secret: string }) | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const keys = keysLoaded.state === 'done' ? keysLoaded.value : [];
  const byId = new Map(keys.map((k) => [k.id, k]));
  const budgets = loaded.state === 'done' ? loaded.value : [];
  const saved = (b: BudgetWithSecret) => {
    setEditing(null);
    if (hasSecret(b)) setSecret(b);
    reload();
  };

  return (
    <section aria-label="Budgets" class="settings">
      <h1>Budgets</h1>
      <p class="summary">
        What a key, a customer or the whole organization may spend on the providers each period. A call that would take
        a budget past its amount is refused (402) before anything is sent; spent is what this period&apos;s calls cost,
        reserved what calls in flight may still cost.
      </p>
      {loaded.state === 'loading' && <p class="summary">Loading…</p>}
      {loaded.state === 'error' && (
        <p role="alert" class="error">
          The budgets could not be listed: {loaded.message}
        </p>
      )}
      {keysLoaded.state === 'error' && (
        <p role="alert" class="error">
          The keys could not be listed (a key budget shows its key&apos;s id): {keysLoaded.message}
        </p>
      )}
      {loaded.state === 'done' && budgets.length === 0 && <p class="summary">No budgets yet.</p>}
      {budgets.length > 0 && (
        <BudgetTable
          budgets={budgets}
          keys={byId}
          now={Date.now()}
          editing={editing}
          onEdit={(b) => setEditing(b.id)}
          onDelete={async (b) => {
            setActionError(null);
            try {
              await deleteBudget(apiKey, b.id);
            } catch (err) {
              setActionError(asApiError(err).message);
            }
            reload();
          }}
          renderEdit={(b) => (
            <BudgetForm apiKey={apiKey} keys={keys} editing={b} onSaved={saved} onCancel={() => setEditing(null)} />
          )}
        />
      )}
      {actionError && (
        <p role="alert" class="error">
          {actionError}
        </p>
      )}
      <BudgetForm apiKey={apiKey} keys={keys} editing={null} onSaved={saved} />
      {secret && <WebhookSecret budget={secret} onClose={() => setSecret(null)} />}
    </section>
  );
}
