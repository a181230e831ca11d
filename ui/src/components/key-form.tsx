/**
 * The form that makes a key or changes one (all but whether it is a test key, which a key keeps): name,
 * owner, scopes, allowed models, expiry and rate limits. A limit that is not a whole number is said before
 * anything is sent; a refusal of the API shows next to the field it names (`param`), a 403 (more than
 * the signed-in key has) too.
 */
import { useState } from 'preact/hooks';
import { type ApiKey, createKey, type KeyWithSecret, patchKey } from '../api-keys';
import {
  asTest,
  changeOf,
  createBody,
  emptyForm,
  formOf,
  formProblem,
  type KeyFormValues,
  SCOPE_TEXT,
  SCOPES,
  withScope,
} from '../lib/key-form';
import { FieldError, fieldProblem, fieldProps, FormError } from './field-error';
import { KeyLimitFields, LIMIT_FIELDS } from './key-limit-fields';
import { useSubmit } from './use-submit';

const FIELDS = ['name', 'is_test', 'owner', 'scopes', 'allowed_models', 'expires_at', ...LIMIT_FIELDS];

const text = (e: Event) => (e.currentTarget as HTMLInputElement).value;

type Props =
  | { apiKey: string; editing: null; onCreated(key: KeyWithSecret): void }
  | { apiKey: string; editing: ApiKey; onSaved(key: ApiKey): void; onCancel(): void };

export function KeyForm(props: Props) {
  const { apiKey, editing } = props;
  const [values, setValues] = useState<KeyFormValues>(editing ? formOf(editing) : emptyForm());
  const { busy, error, setError, run } = useSubmit();
  const [note, setNote] = useState<string | null>(null);
  const form = editing ? `key-${editing.id}` : 'new-key';
  const set = (change: Partial<KeyFormValues>) => setValues({ ...values, ...change });
  const input = (field: string, hint?: string) => fieldProps(error, form, field, hint);

  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    setNote(null);
    const problem = formProblem(values);
    if (problem) {
      setError(fieldProblem(problem.param, problem.message));
      return;
    }
    if (props.editing === null) {
      const { onCreated } = props;
      void run(async () => {
        const made = await createKey(apiKey, createBody(values));
        setValues(emptyForm());
        onCreated(made);
      });
      return;
    }
    const { editing: key, onSaved } = props;
    const change = changeOf(key, values);
    if (Object.keys(change).length === 0) setNote('Nothing changed.');
    else void run(async () => onSaved(await patchKey(apiKey, key.id, change)));
  };

  return (
    <form
      class="settings-form key-form"
      aria-label={editing ? `Edit key ${editing.name}` : 'Create a key'}
      onSubmit={submit}
    >
      {!editing && <h3>Create a key</h3>}
      <div class="field">
        <label>
          Name
          <input value={values.name} onInput={(e) => set({ name: text(e) })} {...input('name')} />
        </label>
        <FieldError error={error} form={form} field="name" />
      </div>
      <div class="field">
        <label>
          Owner email (optional)
          <input type="email" value={values.email} onInput={(e) => set({ email: text(e) })} {...input('owner')} />
        </label>
        <FieldError error={error} form={form} field="owner" />
      </div>
      {!editing && (
        <div class="field">
          <label class="check">
            <input
              type="checkbox"
              checked={values.isTest}
              onChange={(e) => setValues(asTest(values, (e.currentTarget as HTMLInputElement).checked))}
              {...input('is_test', `${form}-test-hint`)}
            />
            Test key
          </label>
          <span id={`${form}-test-hint`} class="field-hint">
            Its logs are test logs (gl_test_…). A test key never holds admin.
          </span>
          <FieldError error={error} form={form} field="is_test" />
        </div>
      )}
      <fieldset class="field wide key-scopes" {...input('scopes')}>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => {
          const barred = scope === 'admin' && values.isTest;
          return (
            <label class="check" key={scope}>
              <input
                type="checkbox"
                aria-label={scope}
                checked={values.scopes.includes(scope)}
                disabled={barred}
                aria-describedby={`${form}-scope-${scope}`}
                onChange={(e) =>
                  set({ scopes: withScope(values, scope, (e.currentTarget as HTMLInputElement).checked) })
                }
              />
              <strong>{scope}</strong>
              <span id={`${form}-scope-${scope}`} class="field-hint">
                {barred ? 'not on a test key' : SCOPE_TEXT[scope]}
              </span>
            </label>
          );
        })}
        <FieldError error={error} form={form} field="scopes" />
      </fieldset>
      <div class="field wide">
        <label>
          Allowed models (optional)
          <textarea
            rows={3}
            value={values.models}
            placeholder={'gpt-4o\nclaude-*\nopenai/*'}
            onInput={(e) => set({ models: (e.currentTarget as HTMLTextAreaElement).value })}
            {...input('allowed_models', `${form}-models-hint`)}
          />
        </label>
        <span id={`${form}-models-hint`} class="field-hint">
          One name or pattern a line (prefix*, provider/*). None: every model.
        </span>
        <FieldError error={error} form={form} field="allowed_models" />
      </div>
      <div class="field">
        <label>
          Expires (optional)
          <input
            type="datetime-local"
            value={values.expires}
            onInput={(e) => set({ expires: text(e) })}
            {...input('expires_at')}
          />
        </label>
        <FieldError error={error} form={form} field="expires_at" />
      </div>
      <KeyLimitFields form={form} editing={editing !== null} values={values} error={error} set={set} />
      <FormError error={error} fields={FIELDS} />
      {note && (
        <p role="status" class="summary">
          {note}
        </p>
      )}
      <div class="actions wide">
        <button type="submit" disabled={busy}>
          {editing ? 'Save key' : 'Create key'}
        </button>
        {props.editing !== null && (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
