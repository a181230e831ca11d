/** The ticked logs copied into a dataset: one of the organization's, or a new one named here. */
import { useState } from 'preact/hooks';
import { SidePanel } from './side-panel';
import { addLogsToDataset, listDatasets } from '../api';
import { formatScreen } from '../lib/screen';
import { go } from '../router';
import { useLoad } from '../use-load';
import { useSubmit } from './use-submit';

const NEW = '';

interface Props {
  apiKey: string;
  ids: readonly string[];
  onClose(): void;
  /** Called once the logs are in the dataset (the explorer then clears its selection). */
  onAdded(): void;
}

export function AddToDataset({ apiKey, ids, onClose, onAdded }: Props) {
  const [datasets] = useLoad(() => listDatasets(apiKey, 1), [apiKey]);
  const [target, setTarget] = useState(NEW);
  const [name, setName] = useState('');
  const { busy, error, run } = useSubmit();
  const valid = target !== NEW || name.trim() !== '';

  const submit = (e: Event) => {
    e.preventDefault();
    if (!valid) return;
    void run(async () => {
      const dataset = await addLogsToDataset(
        apiKey,
        target === NEW ? { name: name.trim() } : { datasetId: target },
        ids,
      );
      onAdded();
      go(formatScreen({ kind: 'dataset', id: dataset.id, page: 1 }));
    });
  };

  return (
    <SidePanel
      label="Add to a dataset"
      title={`Add ${ids.length} ${ids.length === 1 ? 'log' : 'logs'} to a dataset`}
      onClose={onClose}
    >
      <form class="stack" onSubmit={submit}>
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
        <button
          type="submit"
          disabled={!valid || busy}
          title={busy ? 'Adding the logs…' : valid ? undefined : 'Name the new dataset, or choose one, first.'}
        >
          Add to dataset
        </button>
      </form>
    </SidePanel>
  );
}
