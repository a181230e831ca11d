/** The datasets: their list, and one dataset with its logs. Annotation has its own screen (annotate.tsx). */
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  DATASET_PAGE_SIZE,
  getDataset,
  listDatasetLogs,
  listDatasets,
  type Dataset,
  type DatasetLog,
  type Paged,
} from '../api';
import { createEmptyDataset, deleteDataset, patchDataset } from '../api-pages';
import { preview } from '../lib/format';

import { formatScreen } from '../lib/screen';
import { go } from '../router';
import { Pager } from './pager';
import { useLoad } from '../use-load';
import { TimeText } from './time-text';
import { ConfirmButton } from './confirm-button';
import { asApiError, FieldError, fieldProps, FormError } from './field-error';
import { useSubmit } from './use-submit';
import '../pages.css';

/** A list item's prompt or completion; a large one is only in the whole log, shown when it is opened. */
const textCell = (log: DatasetLog, field: 'prompt' | 'completion') =>
  log.truncated_fields?.includes(field) ? <em>large — open the log to read it</em> : preview(log[field]);

export const percentDone = (d: Pick<Dataset, 'log_count' | 'completed_annotation_count'>) =>
  d.log_count === 0 ? 0 : Math.round((100 * d.completed_annotation_count) / d.log_count);

export function DatasetList({ apiKey, page }: { apiKey: string; page: number }) {
  const [loaded, reload] = useLoad<Paged<Dataset>>(() => listDatasets(apiKey, page), [apiKey, page]);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleteError, setDeleteError] = useState<string | null>(null);
  const open = (d: Dataset) => go(formatScreen({ kind: 'dataset', id: d.id, page: 1 }));
  // A dataset as saved is shown at once, until the list read again after the edit arrives.
  const [patched, setPatched] = useState<Record<string, Dataset>>({});
  useEffect(() => setPatched({}), [loaded]);
  return (
    <section aria-label="Datasets">
      <div class="page-head">
        <h1>Datasets</h1>
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New empty dataset…
          </button>
        )}
      </div>
      {creating && (
        <DatasetForm
          apiKey={apiKey}
          dataset={null}
          onDone={() => {
            setCreating(false);
            if (page === 1) reload();
            else go(formatScreen({ kind: 'datasets', page: 1 }));
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      {loaded.state === 'loading' && <p class="summary">Loading…</p>}
      {loaded.state === 'error' && (
        <p role="alert" class="error">
          The datasets could not be listed: {loaded.message}
        </p>
      )}
      {loaded.state === 'done' && loaded.value.count === 0 && (
        <p class="summary">
          No datasets yet. In the log explorer, filter the logs you want and choose “Create dataset”, or make an empty
          one here and add logs to it from the explorer.
        </p>
      )}
      {deleteError && (
        <p role="alert" class="error">
          {deleteError}
        </p>
      )}
      {loaded.state === 'done' && loaded.value.count > 0 && (
        <>
          <div class="table-scroll">
            <table class="logs" aria-label="Datasets">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col" class="num">
                    Logs
                  </th>
                  <th scope="col" class="num">
                    Annotated
                  </th>
                  <th scope="col">Updated</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {loaded.value.results
                  .map((d) => patched[d.id] ?? d)
                  .map((d) =>
                    editing === d.id ? (
                      <tr key={d.id} class="editing">
                        <td colSpan={5}>
                          <DatasetForm
                            apiKey={apiKey}
                            dataset={d}
                            onDone={(saved) => {
                              setEditing(null);
                              setPatched({ ...patched, [saved.id]: saved });
                              reload();
                            }}
                            onCancel={() => setEditing(null)}
                          />
                        </td>
                      </tr>
                    ) : (
                      <tr key={d.id} onClick={() => open(d)}>
                        <td class="dataset-name">
                          <a
                            href={formatScreen({ kind: 'dataset', id: d.id, page: 1 })}
                            onClick={(e) => e.preventDefault()}
                          >
                            {d.name}
                          </a>
                          {d.description && <span class="dataset-description">{d.description}</span>}
                        </td>
                        <td class="num">{d.log_count}</td>
                        <td class="num">{percentDone(d)}%</td>
                        <td>
                          <TimeText iso={d.updated_at} />
                        </td>
                        <td class="row-actions" onClick={(e) => e.stopPropagation()}>
                          <button type="button" aria-label={`Edit dataset ${d.name}`} onClick={() => setEditing(d.id)}>
                            Edit
                          </button>
                          <ConfirmButton
                            label={`Delete dataset ${d.name}`}
                            confirm={`Delete ${d.name} and its ${d.log_count} logs`}
                            onConfirm={async () => {
                              setDeleteError(null);
                              try {
                                await deleteDataset(apiKey, d.id);
                              } catch (err) {
                                setDeleteError(asApiError(err).message);
                              }
                              reload();
                            }}
                          />
                        </td>
                      </tr>
                    ),
                  )}
              </tbody>
            </table>
          </div>
          <Pager
            page={page}
            count={loaded.value.count}
            size={DATASET_PAGE_SIZE}
            onPage={(p) => go(formatScreen({ kind: 'datasets', page: p }))}
          />
        </>
      )}
    </section>
  );
}

/** Creates an empty dataset, or renames and describes one. */
function DatasetForm({
  apiKey,
  dataset,
  onDone,
  onCancel,
}: {
  apiKey: string;
  dataset: Dataset | null;
  onDone(saved: Dataset): void;
  onCancel(): void;
}) {
  const [name, setName] = useState(dataset?.name ?? '');
  const [description, setDescription] = useState(dataset?.description ?? '');
  const { busy, error, run } = useSubmit();
  const form = dataset ? `dataset-${dataset.id}` : 'new-dataset';
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () =>
      onDone(
        dataset
          ? await patchDataset(apiKey, dataset.id, { name, description })
          : await createEmptyDataset(apiKey, name, description),
      ),
    );
  };
  return (
    <form
      class="settings-form"
      aria-label={dataset ? `Edit dataset ${dataset.name}` : 'New empty dataset'}
      onSubmit={submit}
    >
      <div class="field">
        <label>
          Name
          <input
            value={name}
            ref={first}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            {...fieldProps(error, form, 'name')}
          />
        </label>
        <FieldError error={error} form={form} field="name" />
      </div>
      <div class="field wide">
        <label>
          Description
          <textarea
            rows={2}
            value={description}
            onInput={(e) => setDescription((e.currentTarget as HTMLTextAreaElement).value)}
            {...fieldProps(error, form, 'description')}
          />
        </label>
        <FieldError error={error} form={form} field="description" />
      </div>
      <FormError error={error} fields={['name', 'description']} />
      <div class="actions wide">
        <button type="submit" disabled={busy}>
          {dataset ? 'Save dataset' : 'Create dataset'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function DatasetDetail({ apiKey, id, page }: { apiKey: string; id: string; page: number }) {
  const [dataset] = useLoad<Dataset>(() => getDataset(apiKey, id), [apiKey, id]);
  const [logs] = useLoad<Paged<DatasetLog>>(() => listDatasetLogs(apiKey, id, page), [apiKey, id, page]);
  const d = dataset.state === 'done' ? dataset.value : null;
  return (
    <section aria-label="Dataset">
      <p>
        <a href="?v=datasets" onClick={(e) => (e.preventDefault(), go(formatScreen({ kind: 'datasets', page: 1 })))}>
          ← Datasets
        </a>
      </p>
      {dataset.state === 'error' && (
        <p role="alert" class="error">
          {dataset.message}
        </p>
      )}
      {d && (
        <div class="dataset-head">
          <h1>{d.name}</h1>
          {d.description && <p class="dataset-description">{d.description}</p>}
          <p class="summary">
            {d.log_count} logs, {d.completed_annotation_count} annotated ({percentDone(d)}%)
          </p>
          <progress max={100} value={percentDone(d)} aria-label="Annotated" />
          <button
            type="button"
            disabled={d.log_count === 0}
            onClick={() => go(formatScreen({ kind: 'annotate', id, item: 1 }))}
          >
            Annotate
          </button>
        </div>
      )}
      {logs.state === 'done' && logs.value.count > 0 && (
        <>
          <table class="logs" aria-label="Dataset logs">
            <thead>
              <tr>
                <th scope="col" class="num">
                  #
                </th>
                <th scope="col">Model</th>
                <th scope="col">Prompt</th>
                <th scope="col">Completion</th>
                <th scope="col">Error</th>
                <th scope="col">Annotation</th>
              </tr>
            </thead>
            <tbody>
              {logs.value.results.map((log, i) => {
                const item = (page - 1) * DATASET_PAGE_SIZE + i + 1;
                return (
                  <tr key={log.id} onClick={() => go(formatScreen({ kind: 'annotate', id, item }))}>
                    <td class="num">{item}</td>
                    <td>{log.model}</td>
                    <td class="preview">{textCell(log, 'prompt')}</td>
                    <td class="preview">{textCell(log, 'completion')}</td>
                    <td class="preview" title={log.error_message ?? undefined}>
                      {log.error_message ?? ''}
                    </td>
                    <td>{log.annotation_status}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <Pager
            page={page}
            count={logs.value.count}
            size={DATASET_PAGE_SIZE}
            onPage={(p) => go(formatScreen({ kind: 'dataset', id, page: p }))}
          />
        </>
      )}
      {logs.state === 'done' && logs.value.count === 0 && <p class="summary">This dataset holds no logs.</p>}
    </section>
  );
}
