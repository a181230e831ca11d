/**
 * Annotation, one dataset log at a time: a field per evaluator, the annotation status, and keys for
 * everything — 1–9 go to the n-th evaluator's field, ← / → the previous / next log, Ctrl+Enter (⌘+Enter)
 * saves, marks the log completed and goes on, ? lists the keys. Keys other than Ctrl+Enter do nothing
 * while the focus is in a field, so typing a score never moves the page.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  datasetLogAt,
  getDataset,
  listEvaluators,
  scoreDatasetLog,
  setAnnotationStatus,
  type Dataset,
  type DatasetLog,
  type Evaluator,
  type Paged,
} from '../api';
import { formatScreen } from '../lib/screen';
import { go } from '../router';
import { percentDone } from './datasets';
import { useLoad } from '../use-load';
import { scoreHint } from '../lib/evaluator-text';
import { LogView } from './annotate-log';
import { useSubmit } from './use-submit';
import '../pages.css';

const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);

export function Annotate({ apiKey, id, item }: { apiKey: string; id: string; item: number }) {
  const [dataset, reloadDataset] = useLoad<Dataset>(() => getDataset(apiKey, id), [apiKey, id]);
  const [page] = useLoad<Paged<DatasetLog>>(() => datasetLogAt(apiKey, id, item), [apiKey, id, item]);
  const [evaluators] = useLoad<Paged<Evaluator>>(() => listEvaluators(apiKey), [apiKey]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [status, setStatus] = useState('');
  const { busy: saving, error, setError, run } = useSubmit();
  const [help, setHelp] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  const log = page.state === 'done' ? (page.value.results[0] ?? null) : null;
  const total = page.state === 'done' ? page.value.count : 0;
  const list = evaluators.state === 'done' ? evaluators.value.results : [];
  const to = (n: number) => go(formatScreen({ kind: 'annotate', id, item: n }), true);

  useEffect(() => {
    setValues({});
    setError(null);
    setStatus(log?.annotation_status ?? '');
  }, [log?.id]);

  const save = async (complete: boolean) => {
    if (!log || saving) return;
    await run(async () => {
      for (const evaluator of list) {
        const text = values[evaluator.id];
        if (text === undefined || text === '' || log.scores.some((s) => s.evaluator_id === evaluator.id)) continue;
        const value = evaluator.score_value_type === 'boolean' ? text === 'true' : Number(text);
        if (typeof value === 'number' && Number.isNaN(value))
          throw new ApiError(400, 'invalid', `${evaluator.name}: not a number`);
        await scoreDatasetLog(apiKey, id, log.id, evaluator, value);
      }
      const next = complete ? 'completed' : status.trim();
      if (next !== '' && next !== log.annotation_status) await setAnnotationStatus(apiKey, id, log.id, next);
      reloadDataset();
      if (complete && item < total) to(item + 1);
      else if (complete) go(formatScreen({ kind: 'dataset', id, page: 1 }));
    });
  };

  // The key handler is added once and reads this render's state through a ref: an effect re-added after
  // each render would run after the browser paints, and a key pressed before that would see old values.
  const latest = useRef({ save, to, item, total });
  latest.current = { save, to, item, total };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const now = latest.current;
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        void now.save(true);
        return;
      }
      if (typing(e.target)) return;
      if (e.key === 'ArrowRight' && now.item < now.total) now.to(now.item + 1);
      else if (e.key === 'ArrowLeft' && now.item > 1) now.to(now.item - 1);
      else if (e.key === '?') setHelp((h) => !h);
      else if (/^[1-9]$/.test(e.key)) {
        const field = form.current?.querySelectorAll<HTMLElement>('[data-evaluator]')[Number(e.key) - 1];
        if (field) {
          e.preventDefault();
          field.focus();
        }
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const d = dataset.state === 'done' ? dataset.value : null;
  // "log N of M" says the screen is ready: the log and the evaluators' fields are shown, so a key pressed
  // from then on (1–9) finds its field.
  const ready = page.state !== 'loading' && evaluators.state !== 'loading';
  return (
    <section aria-label="Annotation" class="annotate ann-screen">
      <p>
        <a
          href={formatScreen({ kind: 'dataset', id, page: 1 })}
          onClick={(e) => (e.preventDefault(), go(formatScreen({ kind: 'dataset', id, page: 1 })))}
        >
          ← {d?.name ?? 'Dataset'}
        </a>
      </p>
      {d && (
        <div class="progress">
          <progress max={100} value={percentDone(d)} aria-label="Annotated" />
          <span>
            {d.completed_annotation_count} of {d.log_count} annotated
            {ready && ` · log ${item} of ${total || d.log_count}`}
          </span>
        </div>
      )}
      {page.state === 'error' && (
        <p role="alert" class="error">
          {page.message}
        </p>
      )}
      {evaluators.state === 'error' && (
        <p role="alert" class="error">
          The evaluators could not be listed: {evaluators.message}
        </p>
      )}
      {page.state === 'done' && !log && <p class="summary">There is no log {item} in this dataset.</p>}
      {log && (
        <div class="ann-layout">
          <LogView apiKey={apiKey} log={log} />
          <form
            ref={form}
            class="ann-form"
            aria-label="Annotation of this log"
            onSubmit={(e) => {
              e.preventDefault();
              void save(false);
            }}
          >
            <h2>Scores</h2>
            {evaluators.state === 'done' && list.length === 0 && (
              <p class="summary">
                No evaluators yet: create one in{' '}
                <a
                  href={formatScreen({ kind: 'settings' })}
                  onClick={(e) => (e.preventDefault(), go(formatScreen({ kind: 'settings' })))}
                >
                  Settings
                </a>{' '}
                to score logs.
              </p>
            )}
            {list.map((evaluator, i) => {
              const scored = log.scores.find((s) => s.evaluator_id === evaluator.id);
              const label = `${i < 9 ? `${i + 1}. ` : ''}${evaluator.name}`;
              const hintId = `hint-${evaluator.id}`;
              const hint = (
                <span id={hintId} class="field-hint" data-testid="score-hint">
                  {scoreHint(evaluator)}
                  {evaluator.description && <span class="field-description">{evaluator.description}</span>}
                </span>
              );
              if (scored)
                return (
                  <div key={evaluator.id} class="scored">
                    <p>
                      {label}: <strong>{String(scored.score_value)}</strong> (scored)
                    </p>
                    {hint}
                  </div>
                );
              return (
                <div key={evaluator.id} class="score-field">
                  <label>
                    {label}
                    {evaluator.score_value_type === 'boolean' ? (
                      <select
                        data-evaluator
                        aria-describedby={hintId}
                        value={values[evaluator.id] ?? ''}
                        onChange={(e) =>
                          setValues({ ...values, [evaluator.id]: (e.currentTarget as HTMLSelectElement).value })
                        }
                      >
                        <option value="">—</option>
                        <option value="true">yes</option>
                        <option value="false">no</option>
                      </select>
                    ) : (
                      <input
                        data-evaluator
                        inputMode="decimal"
                        aria-describedby={hintId}
                        placeholder="a number"
                        value={values[evaluator.id] ?? ''}
                        onInput={(e) =>
                          setValues({ ...values, [evaluator.id]: (e.currentTarget as HTMLInputElement).value })
                        }
                      />
                    )}
                  </label>
                  {hint}
                </div>
              );
            })}
            <label>
              Status
              <input
                list="annotation-statuses"
                value={status}
                onInput={(e) => setStatus((e.currentTarget as HTMLInputElement).value)}
              />
              <datalist id="annotation-statuses">
                <option value="pending" />
                <option value="in_review" />
                <option value="completed" />
              </datalist>
            </label>
            {error && (
              <p role="alert" class="error">
                {error.message}
              </p>
            )}
            <div class="actions">
              <button type="button" disabled={item <= 1} onClick={() => to(item - 1)}>
                ← Previous
              </button>
              <button type="submit" disabled={saving}>
                Save
              </button>
              <button type="button" disabled={saving} onClick={() => void save(true)}>
                Complete and next (Ctrl+Enter)
              </button>
              <button type="button" disabled={item >= total} onClick={() => to(item + 1)}>
                Next →
              </button>
            </div>
          </form>
        </div>
      )}
      {help && (
        <div role="dialog" aria-label="Keys" class="help">
          <h2>Keys</h2>
          <dl>
            <dt>1–9</dt>
            <dd>the n-th evaluator's field</dd>
            <dt>← / →</dt>
            <dd>previous / next log</dd>
            <dt>Ctrl+Enter, ⌘+Enter</dt>
            <dd>save, mark completed, next log</dd>
            <dt>?</dt>
            <dd>show or hide these keys</dd>
          </dl>
        </div>
      )}
    </section>
  );
}
