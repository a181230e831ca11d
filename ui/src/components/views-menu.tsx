/**
 * Saved views: the organization's named screens (filters, window, sort, columns), applied from a menu;
 * the current screen saved under a name. A relative window is saved without its anchor, so a view opens
 * on the last hour (or day…) as of when it is opened.
 *
 * The view in use is shown by name in the menu, marked "changed" once the screen no longer matches it;
 * it can then be updated to the screen, renamed or deleted. The view in use is the one last applied or
 * saved in this tab (kept for the tab, so a reload keeps it), else any view the screen matches (a shared
 * link).
 */
import { signal } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';
import { listViews, saveView, type ApiError, type SavedView } from '../api';
import { deleteView, patchView } from '../api-pages';
import { formatViewState, parseViewState, type ViewState } from '../lib/view-state';
import { go } from '../router';
import { useLoad } from '../use-load';
import { ConfirmButton } from './confirm-button';
import { asApiError, FieldError, fieldProps, FormError } from './field-error';
import { setShownColumns, shownColumns } from './log-table';
import '../pages.css';

const STORE = 'gatelog.view';
const activeId = signal<string | null>(sessionStorage.getItem(STORE));

function setActive(id: string | null): void {
  activeId.value = id;
  if (id) sessionStorage.setItem(STORE, id);
  else sessionStorage.removeItem(STORE);
}

/** The query a view keeps of a screen: no anchor of a relative window, page 1, no open log. */
function viewQuery(state: ViewState): string {
  const window = state.window.kind === 'relative' ? { ...state.window, at: null } : state.window;
  return formatViewState({ ...state, window, page: 1, log: null });
}

/** Whether the screen shows what the view holds (a view with no columns leaves the columns as they are). */
function matches(view: SavedView, state: ViewState, columns: readonly string[]): boolean {
  if (viewQuery(parseViewState(view.query)) !== viewQuery(state)) return false;
  return view.columns.length === 0 || view.columns.join(',') === columns.join(',');
}

/** Shows the view's screen and its columns, and makes it the view in use. */
export function applyView(view: SavedView): void {
  setActive(view.id);
  if (view.columns.length > 0) setShownColumns(view.columns);
  go(view.query);
}

type Mode = 'idle' | 'saving' | 'renaming';

export function ViewsMenu({ apiKey, state }: { apiKey: string; state: ViewState }) {
  const [views, reload] = useLoad(() => listViews(apiKey), [apiKey]);
  const [mode, setMode] = useState<Mode>('idle');
  const [name, setName] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const list: SavedView[] = views.state === 'done' ? views.value.results : [];
  const columns = shownColumns.value;
  const active =
    list.find((v) => v.id === activeId.value) ??
    (activeId.value === null ? list.find((v) => matches(v, state, columns)) : undefined);
  const changed = active !== undefined && !matches(active, state, columns);

  const run = async (action: () => Promise<void>) => {
    try {
      await action();
      setMode('idle');
      setName('');
      setError(null);
      reload();
    } catch (err) {
      setError(asApiError(err));
    }
  };

  const save = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const created = await saveView(apiKey, { name: name.trim(), query: viewQuery(state), columns });
      setActive(created.id);
    });
  };
  const rename = (e: Event) => {
    e.preventDefault();
    if (active) void run(async () => void (await patchView(apiKey, active.id, { name: name.trim() })));
  };
  const update = () => {
    if (active) void run(async () => void (await patchView(apiKey, active.id, { query: viewQuery(state), columns })));
  };
  // As the side panels do: the form's field takes the focus when it opens, Esc closes it, and the focus
  // goes back to the button that opened it.
  // The opener is gone while the form shows (the buttons give it their place): its namesake is focused.
  const opener = useRef<string | null>(null);
  const field = useRef<HTMLInputElement>(null);
  const bar = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (mode !== 'idle') {
      field.current?.focus();
      return;
    }
    if (opener.current === null) return;
    const label = opener.current;
    opener.current = null;
    const buttons = [...(bar.current?.querySelectorAll<HTMLElement>('button, summary') ?? [])];
    (
      buttons.find((b) => b.textContent?.trim() === label) ??
      buttons.find((b) => b.textContent?.trim() === 'Save view…')
    )?.focus();
  }, [mode]);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    e.stopPropagation();
    close();
  };
  const close = () => {
    setError(null);
    setMode('idle');
  };
  const open = (next: Mode) => {
    opener.current =
      document.activeElement instanceof HTMLElement ? (document.activeElement.textContent?.trim() ?? '') : '';
    setError(null);
    setName(next === 'renaming' && active ? active.name : '');
    setMode(next);
  };

  return (
    <div class="views" role="group" aria-label="Views" ref={bar}>
      <select
        aria-label="Saved views"
        value={active?.id ?? ''}
        title={active ? `View in use: ${active.name}${changed ? ' (changed since saved)' : ''}` : undefined}
        onChange={(e) => {
          const view = list.find((v) => v.id === (e.currentTarget as HTMLSelectElement).value);
          if (view) applyView(view);
          else setActive(null);
        }}
      >
        <option value="">{active ? 'No view' : 'Views…'}</option>
        {list.map((v) => (
          <option key={v.id} value={v.id}>
            {v.name}
          </option>
        ))}
      </select>
      {changed && (
        <span class="view-changed" title="The screen differs from the view as saved">
          changed
        </span>
      )}
      {mode === 'saving' && (
        <form onSubmit={save} class="inline-form" onKeyDown={onKeyDown}>
          <input
            ref={field}
            aria-label="View name"
            required
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            {...fieldProps(error, 'view-new', 'name')}
          />
          <button type="submit" disabled={name.trim() === ''}>
            Save
          </button>
          <button type="button" onClick={close}>
            Cancel
          </button>
          <FieldError error={error} form="view-new" field="name" />
        </form>
      )}
      {mode === 'renaming' && active && (
        <form onSubmit={rename} class="inline-form" onKeyDown={onKeyDown}>
          <input
            ref={field}
            aria-label="New view name"
            required
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            {...fieldProps(error, 'view-rename', 'name')}
          />
          <button type="submit" disabled={name.trim() === ''}>
            Rename
          </button>
          <button type="button" onClick={close}>
            Cancel
          </button>
          <FieldError error={error} form="view-rename" field="name" />
        </form>
      )}
      {mode === 'idle' && (
        <>
          {active && changed && (
            <>
              <button type="button" onClick={update} aria-label={`Update view ${active.name} to this screen`}>
                Update view
              </button>
              <button type="button" onClick={() => applyView(active)} aria-label={`Revert to view ${active.name}`}>
                Revert
              </button>
            </>
          )}
          {active && (
            <details class="view-manage">
              <summary aria-label={`Manage view ${active.name}`}>Manage</summary>
              <div class="view-manage-items">
                <button type="button" onClick={() => open('renaming')} aria-label={`Rename view ${active.name}`}>
                  Rename…
                </button>
                <ConfirmButton
                  label={`Delete view ${active.name}`}
                  confirm={`Delete view ${active.name}`}
                  onConfirm={() =>
                    run(async () => {
                      await deleteView(apiKey, active.id);
                      setActive(null);
                    })
                  }
                />
              </div>
            </details>
          )}
          <button type="button" onClick={() => open('saving')}>
            Save view…
          </button>
        </>
      )}
      {mode === 'idle' ? <FormError error={error} fields={[]} /> : <FormError error={error} fields={['name']} />}
    </div>
  );
}
