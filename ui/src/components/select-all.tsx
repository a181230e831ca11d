/**
 * "Select all N matching": past the page's ticks, every log the filter matches — thousands, never
 * fetched — chosen at once, then copied into a dataset (new or existing; the server copies them by the
 * filter, POST /api/datasets/ or .../logs/bulk/) or exported. The choice holds for one list only: a new
 * filter or time window drops it.
 */
import { signal } from '@preact/signals';
import { useState } from 'preact/hooks';
import { countForDataset, createDatasetFromList, listDatasets } from '../api';
import { addMatchingToDataset } from '../api-logs';
import { formatScreen } from '../lib/screen';
import type { ViewState } from '../lib/view-state';
import { go } from '../router';
import { useLoad } from '../use-load';
import { SidePanel } from './side-panel';
import { useSubmit } from './use-submit';

/** The list (its count key) whose every match is selected; null when none is. */
export const allMatchingOf = signal<string | null>(null);

interface BarProps {
  /** The list's count key: the selection of every match holds for it alone. */
  listKey: string;
  /** Every row shown is ticked. */
  pageTicked: boolean;
  shown: number;
  count: number | null;
  onClear(): void;
  onAdd(): void;
  onExport(): void;
}

/** The line over the table offering (or saying) the selection of every match. */
export function SelectAllBar({ listKey, pageTicked, shown, count, onClear, onAdd, onExport }: BarProps) {
  const all = allMatchingOf.value === listKey;
  if (!all && (!pageTicked || count === null || count <= shown)) return null;
  return (
    <div class="select-all" role="status">
      {all ? (
        <>
          <span>All {count ?? ''} matching logs are selected.</span>
          <button type="button" class="primary" onClick={onAdd}>
            Add {count ?? 'all'} to dataset…
          </button>
          <button type="button" onClick={onExport}>
            Export {count ?? 'all'}…
          </button>
          <button
            type="button"
            class="link"
            onClick={() => {
              allMatchingOf.value = null;
              onClear();
            }}
          >
            Clear selection
          </button>
        </>
      ) : (
        <>
          <span>All {shown} logs shown are selected.</span>
          <button type="button" class="link" onClick={() => (allMatchingOf.value = listKey)}>
            Select all {count} matching logs
          </button>
        </>
      )}
    </div>
  );
}

const NEW = '';

/** Every match copied into a dataset: the count (every environment's logs, as a dataset copies) shown first. */
export function AddMatching({ apiKey, state, onClose }: { apiKey: string; state: ViewState; onClose(): void }) {
  const [datasets] = useLoad(() => listDatasets(apiKey, 1), [apiKey]);
  const [count] = useLoad(() => countForDataset(apiKey, state, Date.now()), [apiKey, JSON.stringify(state)]);
  const [target, setTarget] = useState(NEW);
  const [name, setName] = useState('');
  const { busy, error, run } = useSubmit();
  const valid = count.state === 'done' && (target !== NEW || name.trim() !== '');

  const submit = (e: Event) => {
    e.preventDefault();
    if (!valid) return;
    void run(async () => {
      const id =
        target === NEW
          ? (await createDatasetFromList(apiKey, name.trim(), state, Date.now(), 100)).id
          : (await addMatchingToDataset(apiKey, target, state, Date.now()), target);
      allMatchingOf.value = null;
      go(formatScreen({ kind: 'dataset', id, page: 1 }));
    });
  };

  return (
    <SidePanel
      label="Add every matching log to a dataset"
      title="Add every matching log to a dataset"
      onClose={onClose}
    >
      <form class="stack" onSubmit={submit}>
        <p aria-live="polite">
          {count.state === 'loading' && 'Counting the matching logs…'}
          {count.state === 'done' &&
            `${count.value} ${count.value === 1 ? 'log matches' : 'logs match'} (the logs of every environment: a dataset copies test keys' logs too).`}
        </p>
        <label>
          Dataset
          <select value={target} onChange={(e) => setTarget((e.currentTarget as HTMLSelectElement).value)}>
            <option value={NEW}>A new dataset…</option>
            {(datasets.state === 'done' ? datasets.value.results : []).map((d) => (
              <option key={d.id} value={d.id}>
                {d.name} ({d.log_count})
              </option>
            ))}
          </select>
        </label>
        {target === NEW && (
          <label>
            Name of the new dataset
            <input value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
          </label>
        )}
        <p class="summary">A log already in the dataset is not added twice.</p>
        {error && (
          <p role="alert" class="error">
            {error.message}
          </p>
        )}
        <button type="submit" disabled={!valid || busy}>
          Add {count.state === 'done' ? count.value : ''} to dataset
        </button>
      </form>
    </SidePanel>
  );
}
