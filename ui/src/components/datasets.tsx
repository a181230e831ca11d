/** The datasets: their list, and one dataset with its logs. Annotation has its own screen (annotate.tsx). */
import {
  DATASET_PAGE_SIZE,
  getDataset,
  listDatasetLogs,
  listDatasets,
  type Dataset,
  type DatasetLog,
  type Paged,
} from '../api';
import { preview } from '../lib/format';

/** A list item's prompt or completion; a large one is only in the whole log, shown when it is opened. */
const textCell = (log: DatasetLog, field: 'prompt' | 'completion') =>
  log.truncated_fields?.includes(field) ? <em>large — open the log to read it</em> : preview(log[field]);
import { formatScreen } from '../lib/screen';
import { go } from '../router';
import { Pager } from './pager';
import { useLoad } from '../use-load';
import { TimeText } from './time-text';

export const percentDone = (d: Pick<Dataset, 'log_count' | 'completed_annotation_count'>) =>
  d.log_count === 0 ? 0 : Math.round((100 * d.completed_annotation_count) / d.log_count);

export function DatasetList({ apiKey, page }: { apiKey: string; page: number }) {
  const [loaded] = useLoad<Paged<Dataset>>(() => listDatasets(apiKey, page), [apiKey, page]);
  return (
    <section aria-label="Datasets">
      <h1>Datasets</h1>
      {loaded.state === 'loading' && <p class="summary">Loading…</p>}
      {loaded.state === 'error' && (
        <p role="alert" class="error">
          The datasets could not be listed: {loaded.message}
        </p>
      )}
      {loaded.state === 'done' && loaded.value.count === 0 && (
        <p class="summary">
          No datasets yet. In the log explorer, filter the logs you want and choose “Create dataset”.
        </p>
      )}
      {loaded.state === 'done' && loaded.value.count > 0 && (
        <>
          <table class="logs" aria-label="Datasets">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Logs</th>
                <th scope="col">Annotated</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {loaded.value.results.map((d) => (
                <tr key={d.id} onClick={() => go(formatScreen({ kind: 'dataset', id: d.id, page: 1 }))}>
                  <td>
                    <a href={formatScreen({ kind: 'dataset', id: d.id, page: 1 })} onClick={(e) => e.preventDefault()}>
                      {d.name}
                    </a>
                  </td>
                  <td class="num">{d.log_count}</td>
                  <td class="num">{percentDone(d)}%</td>
                  <td>
                    <TimeText iso={d.updated_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
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
                <th scope="col">#</th>
                <th scope="col">Model</th>
                <th scope="col">Prompt</th>
                <th scope="col">Completion</th>
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
