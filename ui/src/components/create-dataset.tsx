/**
 * A dataset made from what the explorer shows: its time window and filters, every matching log or a
 * sample of them. The match count is shown before anything is created.
 */
import { useState } from 'preact/hooks';
import { SidePanel } from './side-panel';
import { countForDataset, createDatasetFromList } from '../api';
import { useLoad } from '../use-load';
import { formatScreen } from '../lib/screen';
import type { ViewState } from '../lib/view-state';
import { go } from '../router';
import { conditionText } from './filter-bar';
import { useSubmit } from './use-submit';

interface Props {
  apiKey: string;
  state: ViewState;
  onClose(): void;
}

export function CreateDataset({ apiKey, state, onClose }: Props) {
  const [count] = useLoad(() => countForDataset(apiKey, state, Date.now()), [apiKey, JSON.stringify(state)]);
  const matching = count.state === 'done' ? count.value : 0;
  const [name, setName] = useState('');
  const [sampling, setSampling] = useState('100');
  const { busy, error, run } = useSubmit();
  const percent = Number(sampling);
  const valid =
    count.state === 'done' && name.trim() !== '' && Number.isFinite(percent) && percent > 0 && percent <= 100;
  const kept = valid ? Math.round((matching * percent) / 100) : 0;
  // What a disabled button says when asked why.
  const whyNot = busy
    ? 'Creating the dataset…'
    : count.state !== 'done'
      ? 'Counting the matching logs first.'
      : name.trim() === ''
        ? 'Give the dataset a name first.'
        : !valid
          ? 'The sample must be between 1 and 100 %.'
          : null;

  const submit = (e: Event) => {
    e.preventDefault();
    if (!valid) return;
    void run(async () => {
      const dataset = await createDatasetFromList(apiKey, name.trim(), state, Date.now(), percent);
      go(formatScreen({ kind: 'dataset', id: dataset.id, page: 1 }));
    });
  };

  return (
    <SidePanel label="Create dataset" title="Create a dataset from these logs" onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <p aria-live="polite">
          {count.state === 'loading' && 'Counting the matching logs…'}
          {count.state === 'error' && <span class="error">{count.message}</span>}
          {count.state === 'done' && (
            <>
              <strong>{matching}</strong> logs of every environment match this time window
              {state.conditions.length > 0 ? ` and ${state.conditions.map(conditionText).join(', ')}` : ''}.
            </>
          )}
        </p>
        <label>
          Name
          <input required value={name} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <label>
          Sample (% of the matching logs, chosen at random)
          <input
            type="number"
            min={1}
            max={100}
            value={sampling}
            onInput={(e) => setSampling((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <p class="summary">{valid ? `${kept} logs will be copied into the dataset.` : ''}</p>
        {error && (
          <p role="alert" class="error">
            {error.message}
          </p>
        )}
        <button
          type="submit"
          disabled={!valid || busy}
          title={whyNot ?? undefined}
          aria-describedby={whyNot ? 'create-why-not' : undefined}
        >
          Create dataset
        </button>
        {whyNot && (
          <span id="create-why-not" class="visually-hidden">
            {whyNot}
          </span>
        )}
      </form>
    </SidePanel>
  );
}
