/**
 * The organization's settings (`?v=settings`): its providers and their keys (previews only; set,
 * replace, delete), its response cache (defaults, emptying), its retention and its evaluators (list, create, edit,
 * delete), so that nobody has to leave the UI for a curl call.
 * An error of the API is shown next to the field it names (error.param).
 */
import { useEffect, useState } from 'preact/hooks';
import type { Evaluator, Paged } from '../api';
import { listEvaluators } from '../api';
import { createEvaluator, patchEvaluator } from '../api-pages';
import { EVALUATOR_TYPES, scoreRange } from '../lib/evaluator-text';
import { useLoad } from '../use-load';
import { CacheSettings } from './cache-settings';
import { FieldError, fieldProps, FormError } from './field-error';
import { ProviderKeys } from './provider-keys';
import { RetentionSettings } from './retention-settings';
import { useSubmit } from './use-submit';
import '../pages.css';

const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;

export function Settings({ apiKey }: { apiKey: string }) {
  return (
    <section aria-label="Settings" class="settings">
      <h1>Settings</h1>
      <ProviderKeys apiKey={apiKey} />
      <CacheSettings apiKey={apiKey} />
      <RetentionSettings apiKey={apiKey} />
      <Evaluators apiKey={apiKey} />
    </section>
  );
}

const EVALUATOR_FIELDS = ['name', 'evaluator_slug', 'type', 'score_value_type', 'description'] as const;

function Evaluators({ apiKey }: { apiKey: string }) {
  const [loaded, reload] = useLoad<Paged<Evaluator>>(() => listEvaluators(apiKey), [apiKey]);
  const [editing, setEditing] = useState<string | null>(null);
  // An evaluator as saved is shown at once, until the list read again after the edit arrives.
  const [patched, setPatched] = useState<Record<string, Evaluator>>({});
  useEffect(() => setPatched({}), [loaded]);
  const list = loaded.state === 'done' ? loaded.value.results.map((e) => patched[e.id] ?? e) : [];
  return (
    <section aria-labelledby="evaluators-title" class="settings-part">
      <h2 id="evaluators-title">Evaluators</h2>
      <p class="summary">
        What logs are scored by: in annotation, each evaluator is one field. A numerical evaluator takes any number (say
        its scale in the description); a boolean one takes yes or no.
      </p>
      {loaded.state === 'loading' && <p class="summary">Loading…</p>}
      {loaded.state === 'error' && (
        <p role="alert" class="error">
          The evaluators could not be listed: {loaded.message}
        </p>
      )}
      {loaded.state === 'done' && list.length === 0 && <p class="summary">No evaluators yet.</p>}
      {list.length > 0 && (
        <div class="table-scroll">
          <table class="logs plain" aria-label="Evaluators">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col">Type</th>
                <th scope="col">Score</th>
                <th scope="col">Description</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((ev) =>
                editing === ev.id ? (
                  <tr key={ev.id}>
                    <td colSpan={6}>
                      <EvaluatorForm
                        apiKey={apiKey}
                        editing={ev}
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
                  <tr key={ev.id}>
                    <td>{ev.name}</td>
                    <td>
                      <code>{ev.evaluator_slug}</code>
                    </td>
                    <td>{ev.type}</td>
                    <td>
                      {ev.score_value_type} <span class="summary">({scoreRange(ev)})</span>
                    </td>
                    <td class="wrap">{ev.description}</td>
                    <td>
                      <button type="button" aria-label={`Edit evaluator ${ev.name}`} onClick={() => setEditing(ev.id)}>
                        Edit
                      </button>
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
        </div>
      )}
      <EvaluatorForm apiKey={apiKey} editing={null} onDone={reload} />
    </section>
  );
}

/** Creates an evaluator, or edits one (its score type then shown, not changeable: the API keeps it). */
function EvaluatorForm({
  apiKey,
  editing,
  onDone,
  onCancel,
}: {
  apiKey: string;
  editing: Evaluator | null;
  onDone(saved: Evaluator): void;
  onCancel?(): void;
}) {
  const [name, setName] = useState(editing?.name ?? '');
  const [slug, setSlug] = useState(editing?.evaluator_slug ?? '');
  const [type, setType] = useState<Evaluator['type']>(editing?.type ?? 'human');
  const [scoreType, setScoreType] = useState<Evaluator['score_value_type']>(editing?.score_value_type ?? 'numerical');
  const [description, setDescription] = useState(editing?.description ?? '');
  const { busy, error, run } = useSubmit();
  const form = editing ? `evaluator-${editing.id}` : 'new-evaluator';

  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const common = { name, type, description, ...(slug.trim() ? { evaluator_slug: slug.trim() } : {}) };
      let saved: Evaluator;
      if (editing) saved = await patchEvaluator(apiKey, editing.id, common);
      else {
        saved = await createEvaluator(apiKey, { ...common, score_value_type: scoreType });
        setName('');
        setSlug('');
        setDescription('');
      }
      onDone(saved);
    });
  };

  return (
    <form
      class="settings-form"
      aria-label={editing ? `Edit evaluator ${editing.name}` : 'Create an evaluator'}
      onSubmit={submit}
    >
      {!editing && <h3>Create an evaluator</h3>}
      <div class="field">
        <label>
          Name
          <input value={name} onInput={(e) => setName(value(e))} {...fieldProps(error, form, 'name')} />
        </label>
        <FieldError error={error} form={form} field="name" />
      </div>
      <div class="field">
        <label>
          Slug {editing ? '' : '(optional)'}
          <input
            value={slug}
            placeholder="lower_snake_case of the name"
            onInput={(e) => setSlug(value(e))}
            {...fieldProps(error, form, 'evaluator_slug')}
          />
        </label>
        <FieldError error={error} form={form} field="evaluator_slug" />
      </div>
      <div class="field">
        <label>
          Type
          <select
            value={type}
            onChange={(e) => setType(value(e) as Evaluator['type'])}
            {...fieldProps(error, form, 'type')}
          >
            {Object.entries(EVALUATOR_TYPES).map(([t, text]) => (
              <option key={t} value={t}>
                {text}
              </option>
            ))}
          </select>
        </label>
        <FieldError error={error} form={form} field="type" />
      </div>
      <div class="field">
        <label>
          Score type
          <select
            value={scoreType}
            disabled={editing !== null}
            aria-describedby={editing ? `${form}-score-note` : undefined}
            onChange={(e) => setScoreType(value(e) as Evaluator['score_value_type'])}
          >
            <option value="numerical">numerical (any number)</option>
            <option value="boolean">boolean (yes or no)</option>
          </select>
        </label>
        {editing && (
          <span id={`${form}-score-note`} class="summary">
            An evaluator's score type cannot change: its scores would change meaning.
          </span>
        )}
        <FieldError error={error} form={form} field="score_value_type" />
      </div>
      <div class="field wide">
        <label>
          Description
          <textarea
            rows={2}
            value={description}
            placeholder="What it measures, and its scale (e.g. 1 to 5)"
            onInput={(e) => setDescription((e.currentTarget as HTMLTextAreaElement).value)}
            {...fieldProps(error, form, 'description')}
          />
        </label>
        <FieldError error={error} form={form} field="description" />
      </div>
      <FormError error={error} fields={EVALUATOR_FIELDS} />
      <div class="actions wide">
        <button type="submit" disabled={busy}>
          {editing ? 'Save evaluator' : 'Create evaluator'}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
