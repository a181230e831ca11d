/**
 * The UI's shell: sign in with an API key, then the log explorer (or the dashboard, the sessions…); the
 * theme switch in the header. What the signed-in key may do (GET /api/keys/current/) marks the sections it cannot use.
 */
import { computed, signal } from '@preact/signals';
import { useState } from 'preact/hooks';
import { ApiError, checkKey, forgetKey, savedKey, saveKey } from './api';
import { type ApiKey, currentKey } from './api-keys';
import { Annotate } from './components/annotate';
import { BudgetsPage } from './components/budgets-loader';
import { SessionsPage } from './components/sessions-loader';
import { Dashboard } from './components/dashboard';
import { TraceView } from './components/trace-view';
import { outage } from './connection';
import { DatasetDetail, DatasetList } from './components/datasets';
import { Explorer } from './components/explorer';
import { Keys } from './components/keys';
import { NeedsScope } from './components/needs-scope';
import { Settings } from './components/settings';
import { formatScreen, parseScreen } from './lib/screen';
import { go, search } from './router';
import { setTimeZone, timeZone } from './components/time-text';
import type { TimeZoneChoice } from './lib/format';
import { setTheme, theme, type Theme } from './theme';
import { PaletteLauncher } from './components/palette-launcher';
import { lacks } from './lib/key-list';
import { type Loaded, useLoad } from './use-load';

const apiKey = signal<string | null>(savedKey());
const screen = computed(() => parseScreen(search.value));

/** The signed-in key when it is known to lack admin: the settings, keys and budgets pages say so instead. */
const withoutAdmin = (current: Loaded<ApiKey | null>): ApiKey | null =>
  current.state === 'done' && current.value && lacks(current.value.scopes, 'admin') ? current.value : null;

function Screen({ apiKey: key, current }: { apiKey: string; current: Loaded<ApiKey | null> }) {
  const s = screen.value;
  const limited = withoutAdmin(current);
  switch (s.kind) {
    case 'datasets':
      return <DatasetList apiKey={key} page={s.page} />;
    case 'dataset':
      return <DatasetDetail apiKey={key} id={s.id} page={s.page} />;
    case 'annotate':
      return <Annotate apiKey={key} id={s.id} item={s.item} />;
    case 'settings':
      return limited ? <NeedsScope page="Settings" scope="admin" keyName={limited.name} /> : <Settings apiKey={key} />;
    case 'keys':
      return <Keys apiKey={key} current={current} sort={s.sort} showRevoked={s.showRevoked} />;
    case 'budgets':
      return <BudgetsPage apiKey={key} current={current} />;
    case 'dashboard':
      return <Dashboard apiKey={key} />;
    case 'sessions':
      return <SessionsPage apiKey={key} />;
    case 'trace':
      return <TraceView apiKey={key} traceId={s.id} />;
    default:
      return <Explorer apiKey={key} />;
  }
}

/** A link that changes the screen without reloading the page. */
function NavLink({
  query,
  current,
  needs,
  children,
}: {
  query: string;
  current: boolean;
  /** A scope the signed-in key lacks: the link is marked, and says which. */
  needs?: string;
  children: string;
}) {
  return (
    <a
      href={query || './'}
      aria-current={current ? 'page' : undefined}
      class={needs ? 'needs-scope' : undefined}
      title={needs ? `Needs a key with the ${needs} scope` : undefined}
      aria-label={needs ? `${children} (needs ${needs})` : undefined}
      onClick={(e) => {
        e.preventDefault();
        go(query);
      }}
    >
      {children}
    </a>
  );
}

export function App() {
  const key = apiKey.value;
  const [loaded] = useLoad(() => (key ? currentKey(key) : Promise.resolve(null)), [key]);
  // Just signed in, the answer for no key is still there for a render: not known yet, rather than "no key".
  const current: Loaded<ApiKey | null> =
    key && loaded.state === 'done' && !loaded.value ? { state: 'loading' } : loaded;
  const needsAdmin = withoutAdmin(current) ? 'admin' : undefined;
  return (
    <>
      <header class="top">
        <a class="brand" href="./">
          gatelog
        </a>
        {apiKey.value && (
          <nav class="sections" aria-label="Sections">
            <NavLink query={formatScreen({ kind: 'dashboard' })} current={screen.value.kind === 'dashboard'}>
              Dashboard
            </NavLink>
            <NavLink query="" current={screen.value.kind === 'logs'}>
              Logs
            </NavLink>
            <NavLink query={formatScreen({ kind: 'sessions' })} current={screen.value.kind === 'sessions'}>
              Sessions
            </NavLink>
            <NavLink
              query={formatScreen({ kind: 'datasets', page: 1 })}
              current={['datasets', 'dataset', 'annotate'].includes(screen.value.kind)}
            >
              Datasets
            </NavLink>
            <NavLink
              query={formatScreen({ kind: 'settings' })}
              current={screen.value.kind === 'settings'}
              needs={needsAdmin}
            >
              Settings
            </NavLink>
            <NavLink
              query={formatScreen({ kind: 'keys', sort: 'used', showRevoked: true })}
              current={screen.value.kind === 'keys'}
              needs={needsAdmin}
            >
              Keys
            </NavLink>
            <NavLink
              query={formatScreen({ kind: 'budgets' })}
              current={screen.value.kind === 'budgets'}
              needs={needsAdmin}
            >
              Budgets
            </NavLink>
          </nav>
        )}
        <span class="spacer" />
        <label class="top-choice">
          <span class="label-text">Theme</span>
          <select
            aria-label="Theme"
            value={theme.value}
            onChange={(e) => setTheme((e.currentTarget as HTMLSelectElement).value as Theme)}
          >
            <option value="system">System</option>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
          </select>
        </label>
        <label class="top-choice">
          <span class="label-text">Times</span>
          <select
            aria-label="Times"
            value={timeZone.value}
            onChange={(e) => setTimeZone((e.currentTarget as HTMLSelectElement).value as TimeZoneChoice)}
          >
            <option value="local">Local</option>
            <option value="utc">UTC</option>
          </select>
        </label>
        {apiKey.value && (
          <button
            type="button"
            onClick={() => {
              forgetKey();
              apiKey.value = null;
            }}
          >
            Sign out
          </button>
        )}
      </header>
      <OutageBanner />
      <main>{apiKey.value ? <Screen apiKey={apiKey.value} current={current} /> : <SignIn />}</main>
      {apiKey.value && <PaletteLauncher apiKey={apiKey.value} />}
    </>
  );
}

/**
 * Says so while gatelog does not answer: what the screen shows stays (and is retried, with backoff, by
 * whatever loads it); the banner goes once an answer arrives.
 */
function OutageBanner() {
  const down = outage.value;
  if (!down) return null;
  return (
    <div class="outage" role="status">
      <strong>gatelog is not answering — retrying.</strong> {down.reason ? `${down.reason} ` : ''}What is shown is from
      before; it updates when gatelog answers again.
    </div>
  );
}

function SignIn() {
  const [key, setKey] = useState('');
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await checkKey(key.trim());
      saveKey(key.trim(), remember);
      apiKey.value = key.trim();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'gatelog could not be reached.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="sign-in" onSubmit={submit}>
      <h1>Sign in</h1>
      <p>
        Paste an API key of your organization (<code>gatelog keys create --org NAME --name ui</code> prints one). It is
        kept in this browser only.
      </p>
      <label>
        API key
        <input
          type="password"
          autocomplete="off"
          required
          value={key}
          onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <label class="inline">
        <input
          type="checkbox"
          checked={remember}
          onChange={(e) => setRemember((e.currentTarget as HTMLInputElement).checked)}
        />{' '}
        Remember on this computer
      </label>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <button
        type="submit"
        class="primary"
        disabled={busy || key.trim() === ''}
        title={busy ? 'Checking the key…' : key.trim() === '' ? 'Paste an API key first' : undefined}
      >
        Sign in
      </button>
    </form>
  );
}
