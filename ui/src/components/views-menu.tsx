/**
 * Saved views: the organization's named screens (filters, window, sort, columns), applied from a menu;
 * the current screen saved under a name. A relative window is saved without its anchor, so a view opens
 * on the last hour (or day…) as of when it is opened.
 */
import { useState } from 'preact/hooks';
import { ApiError, listViews, saveView, type SavedView } from '../api';
import { formatViewState, type ViewState } from '../lib/view-state';
import { go } from '../router';
import { useLoad } from '../use-load';
import { setShownColumns, shownColumns } from './log-table';

export function ViewsMenu({ apiKey, state }: { apiKey: string; state: ViewState }) {
  const [views, reload] = useLoad(() => listViews(apiKey), [apiKey]);
  const [naming, setNaming] = useState(false);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const list: SavedView[] = views.state === 'done' ? views.value.results : [];

  const save = async (e: Event) => {
    e.preventDefault();
    const window = state.window.kind === 'relative' ? { ...state.window, at: null } : state.window;
    try {
      await saveView(apiKey, {
        name: name.trim(),
        query: formatViewState({ ...state, window, page: 1, log: null }),
        columns: shownColumns.value,
      });
      setNaming(false);
      setName('');
      setError(null);
      reload();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };

  return (
    <div class="views">
      <select
        aria-label="Saved views"
        value=""
        onChange={(e) => {
          const view = list.find((v) => v.id === (e.currentTarget as HTMLSelectElement).value);
          if (!view) return;
          if (view.columns.length > 0) setShownColumns(view.columns);
          go(view.query);
        }}
      >
        <option value="">Views…</option>
        {list.map((v) => (
          <option key={v.id} value={v.id}>
            {v.name}
          </option>
        ))}
      </select>
      {naming ? (
        <form onSubmit={save} class="inline-form">
          <input
            aria-label="View name"
            required
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          />
          <button type="submit" disabled={name.trim() === ''}>
            Save
          </button>
          <button type="button" onClick={() => setNaming(false)}>
            Cancel
          </button>
          {error && (
            <span role="alert" class="error">
              {error}
            </span>
          )}
        </form>
      ) : (
        <button type="button" onClick={() => setNaming(true)}>
          Save view…
        </button>
      )}
    </div>
  );
}
