/**
 * The Keys page (`?v=keys`): the organization's keys, last use first, revoked ones dimmed (or hidden),
 * each with its budgets' spend this period (the budgets listed once, for every row); a key made (its
 * secret shown once), changed, rotated or revoked. The order and whether revoked keys show are in the
 * URL. A signed-in key without the admin scope is told so plainly instead.
 */
import { useState } from 'preact/hooks';
import { type ApiKey, type KeyWithSecret, listKeys, revokeKey } from '../api-keys';
import { listBudgets } from '../api-budgets';
import { budgetsByKey } from '../lib/budget-list';
import { KEY_SORTS, type KeySort, lacks, shownKeys, sortKeys } from '../lib/key-list';
import { formatScreen } from '../lib/screen';
import { go } from '../router';
import { type Loaded, useLoad } from '../use-load';
import { asApiError } from './field-error';
import { KeyForm } from './key-form';
import { KeySecret } from './one-time-secret';
import { KeyTable } from './key-table';
import { NeedsScope } from './needs-scope';
import { RotateKey } from './rotate-key';
import { SidePanel } from './side-panel';
import '../pages.css';

interface View {
  sort: KeySort;
  showRevoked: boolean;
}

export function Keys({ apiKey, current, ...view }: View & { apiKey: string; current: Loaded<ApiKey | null> }) {
  if (current.state === 'loading') return <p class="summary">Loading…</p>;
  // Not known (an error): the page tries, and the list says what the API answers.
  const me = current.state === 'done' ? current.value : null;
  if (me && lacks(me.scopes, 'admin')) return <NeedsScope page="Keys" scope="admin" keyName={me.name} />;
  return <KeyList apiKey={apiKey} currentId={me?.id ?? ''} {...view} />;
}

function KeyList({ apiKey, currentId, sort, showRevoked }: View & { apiKey: string; currentId: string }) {
  const [loaded, reload] = useLoad(() => listKeys(apiKey), [apiKey]);
  // One call for every key's spend; without its answer the rows show no spend at all.
  const [budgets] = useLoad(() => listBudgets(apiKey), [apiKey]);
  const [editing, setEditing] = useState<string | null>(null);
  const [rotating, setRotating] = useState<ApiKey | null>(null);
  const [created, setCreated] = useState<KeyWithSecret | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const now = Date.now();
  const all = loaded.state === 'done' ? loaded.value : [];
  const keys = sortKeys(shownKeys(all, showRevoked), sort);
  const revoked = all.filter((k) => k.revoked_at !== null).length;
  const show = (change: Partial<View>) => go(formatScreen({ kind: 'keys', sort, showRevoked, ...change }), true);

  return (
    <section aria-label="Keys" class="settings">
      <h1>Keys</h1>
      <p class="summary">
        The API keys of this organization: who holds each, what it may do and when it was last used. A key&apos;s secret
        is shown once, when it is made or rotated.
      </p>
      <div class="key-controls">
        <label>
          Order{' '}
          <select
            value={sort}
            onChange={(e) => show({ sort: (e.currentTarget as HTMLSelectElement).value as KeySort })}
          >
            {Object.entries(KEY_SORTS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          <input
            type="checkbox"
            checked={showRevoked}
            onChange={(e) => show({ showRevoked: (e.currentTarget as HTMLInputElement).checked })}
          />{' '}
          Show revoked keys{revoked > 0 ? ` (${revoked})` : ''}
        </label>
      </div>
      {loaded.state === 'loading' && <p class="summary">Loading…</p>}
      {loaded.state === 'error' && (
        <p role="alert" class="error">
          The keys could not be listed: {loaded.message}
        </p>
      )}
      {loaded.state === 'done' && keys.length === 0 && (
        <p class="summary">{all.length === 0 ? 'No keys yet.' : `No key in use: ${revoked} revoked, hidden.`}</p>
      )}
      {keys.length > 0 && (
        <KeyTable
          keys={keys}
          now={now}
          currentId={currentId}
          editing={editing}
          budgets={budgets.state === 'done' ? budgetsByKey(budgets.value) : null}
          onEdit={(k) => setEditing(k.id)}
          onRotate={setRotating}
          onRevoke={async (k) => {
            setActionError(null);
            try {
              await revokeKey(apiKey, k.id);
            } catch (err) {
              setActionError(asApiError(err).message);
            }
            reload();
          }}
          renderEdit={(k) => (
            <KeyForm
              apiKey={apiKey}
              editing={k}
              onSaved={() => (setEditing(null), reload())}
              onCancel={() => setEditing(null)}
            />
          )}
        />
      )}
      {actionError && (
        <p role="alert" class="error">
          {actionError}
        </p>
      )}
      <KeyForm apiKey={apiKey} editing={null} onCreated={(k) => (setCreated(k), reload())} />
      {created && (
        <SidePanel label="New key" title={`Key ${created.name} created`} onClose={() => setCreated(null)}>
          <div class="stack">
            <KeySecret secret={created.key} name={created.name} />
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </SidePanel>
      )}
      {rotating && <RotateKey apiKey={apiKey} target={rotating} onRotated={reload} onClose={() => setRotating(null)} />}
    </section>
  );
}
