/**
 * The organization's providers in the settings: each with its kind, base URL, models, options and keys
 * (previews, key ids, weights), a key or the whole provider deleted; and the form that registers a
 * provider or changes it while adding or replacing one of its keys (POST /api/provider-keys/). The kinds
 * and their options are the server's (GET /api/provider-kinds/).
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';
import {
  deleteOneProviderKey,
  deleteProviderKey,
  listProviderKeys,
  listProviderKinds,
  setProviderKey,
  type ProviderKey,
  type ProviderKeyInput,
} from '../api-pages';
import {
  allOptionNames,
  defaultKind,
  kindText,
  modelsText,
  optionFields,
  optionName,
  optionText,
  optionValue,
  parseModels,
} from '../lib/provider-form';
import { useLoad } from '../use-load';
import { ConfirmButton } from './confirm-button';
import { asApiError, FieldError, fieldProps, FormError } from './field-error';
import { TimeText } from './time-text';
import { useSubmit } from './use-submit';

const FORM = 'provider-key';
const DEFAULT_KEY_ID = 'default';

const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;

/** A key id the provider does not have yet: key-2, key-3, … */
function freshKeyId(p: ProviderKey): string {
  for (let n = p.keys.length + 1; ; n++) {
    if (!p.keys.some((k) => k.key_id === `key-${n}`)) return `key-${n}`;
  }
}

export function ProviderKeys({ apiKey }: { apiKey: string }) {
  const [keys, reload] = useLoad<{ results: ProviderKey[] }>(() => listProviderKeys(apiKey), [apiKey]);
  const [kindList] = useLoad(() => listProviderKinds(apiKey), [apiKey]);
  const [provider, setProvider] = useState('openai');
  // null: the kind follows the name, as the API defaults it.
  const [chosenKind, setKind] = useState<string | null>(null);
  const [secret, setSecret] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [models, setModels] = useState('');
  // The options typed, by field; only the chosen kind's are sent.
  const [options, setOptions] = useState<Record<string, string>>({});
  const [keyId, setKeyId] = useState('');
  const [weight, setWeight] = useState('');
  const { busy, error, setError, run } = useSubmit();
  const [deleteError, setDeleteError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const secretField = useRef<HTMLInputElement>(null);

  const list = keys.state === 'done' ? keys.value.results : [];
  const kinds = kindList.state === 'done' ? kindList.value.results : [];
  const kindNames = kinds.map((k) => k.kind);
  const kindOf = (k: string) => kinds.find((info) => info.kind === k);
  const name = provider.trim();
  const kind = chosenKind ?? defaultKind(name, kindNames);
  const fields = optionFields(kindOf(kind));
  const registered = list.find((p) => p.provider === name);
  const id = keyId.trim() || DEFAULT_KEY_ID;
  // A kind without an address of its own (Azure), or a name gatelog does not know, is called only at the address given.
  const baseUrlNeeded = kindOf(kind)?.base_url_required === true || !kindNames.includes(name);
  const formFields = [
    'provider',
    'api_key',
    'kind',
    'base_url',
    ...allOptionNames(kinds),
    'models',
    'key_id',
    'weight',
  ];

  /** "Add a key": the form holds the provider as registered (a POST sets all of it) and a new key id. */
  const addKeyTo = (p: ProviderKey) => {
    setProvider(p.provider);
    setKind(p.kind);
    setBaseUrl(p.base_url ?? '');
    setModels(modelsText(p.models));
    setOptions(Object.fromEntries(optionFields(kindOf(p.kind)).map((f) => [f.name, optionText(p[f.name])])));
    setKeyId(freshKeyId(p));
    setWeight('');
    setSecret('');
    setError(null);
    setSaved(null);
    secretField.current?.focus();
  };

  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(null);
    // Not a number at all would reach the API as null, which reads as "the default weight".
    if (weight.trim() && !Number.isFinite(Number(weight))) {
      setError(new ApiError(400, 'invalid_weight', 'weight: give a number above 0, e.g. 1 or 2.5.', 'weight'));
      return;
    }
    const body: ProviderKeyInput = { provider: name, api_key: secret, kind };
    if (baseUrl.trim()) body.base_url = baseUrl.trim();
    const modelList = parseModels(models);
    if (modelList.length > 0) body.models = modelList;
    for (const field of fields) {
      const typed = optionValue(field, options[field.name] ?? '');
      if (typed !== undefined) body[field.name] = typed;
    }
    if (keyId.trim()) body.key_id = keyId.trim();
    if (weight.trim()) body.weight = Number(weight);
    void run(async () => {
      const set = await setProviderKey(apiKey, body);
      const key = set.keys.find((k) => k.key_id === id);
      setSecret('');
      setSaved(`The ${set.provider} key ${id} (${key?.api_key_preview ?? set.api_key_preview}) is saved.`);
      reload();
    });
  };

  return (
    <section aria-labelledby="provider-keys-title" class="settings-part">
      <h2 id="provider-keys-title">Provider keys</h2>
      <p class="summary">
        The providers gatelog calls for this organization, and their keys. Keys are stored encrypted; only a preview is
        ever shown again. A provider with several keys spreads its calls over them in proportion to their weights.
      </p>
      {keys.state === 'loading' && <p class="summary">Loading…</p>}
      {keys.state === 'error' && (
        <p role="alert" class="error">
          The provider keys could not be listed: {keys.message}
        </p>
      )}
      {keys.state === 'done' && list.length === 0 && (
        <p class="summary">No provider key yet: proxied calls need one (or customer_credentials in the call).</p>
      )}
      {list.length > 0 && (
        <div class="table-scroll">
          <table class="logs plain providers" aria-label="Provider keys">
            <colgroup>
              <col class="p-name" />
              <col class="p-keys" />
              <col class="p-url" />
              <col class="p-kind" />
              <col class="p-models" />
              <col class="p-updated" />
              <col class="p-actions" />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                <th scope="col">Keys</th>
                <th scope="col">Base URL</th>
                <th scope="col">Kind</th>
                <th scope="col">Models</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.provider}>
                  <td data-label="Provider">
                    <strong>{p.provider}</strong>
                  </td>
                  <td data-label="Keys">
                    {p.keys.length === 0 ? (
                      <span class="summary">no key: calls to it fail until one is set</span>
                    ) : (
                      <ul class="key-list" aria-label={`Keys of ${p.provider}`}>
                        {p.keys.map((k) => (
                          <li key={k.key_id}>
                            <code>{k.api_key_preview}</code> <span class="key-id">{k.key_id}</span>{' '}
                            <span class="summary">weight {k.weight}</span>
                            {/* The last key goes with its provider (Delete on the row): a provider without a key fails every call. */}
                            {p.keys.length > 1 && (
                              <ConfirmButton
                                label={`Delete key ${k.key_id} of ${p.provider}`}
                                confirm={`Delete key ${k.key_id}`}
                                onConfirm={async () => {
                                  setDeleteError(null);
                                  try {
                                    await deleteOneProviderKey(apiKey, p.provider, k.key_id);
                                  } catch (err) {
                                    setDeleteError(asApiError(err).message);
                                  }
                                  reload();
                                }}
                              />
                            )}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td data-label="Base URL">{p.base_url ?? <span class="summary">default</span>}</td>
                  <td data-label="Kind">
                    {p.kind}
                    {optionFields(kindOf(p.kind)).map((f) => (
                      <span key={f.name} class="field-hint">
                        {optionName(f.name)} {optionText(p[f.name]) || '(default)'}
                      </span>
                    ))}
                  </td>
                  <td data-label="Models">
                    {p.models?.length ? p.models.join(', ') : <span class="summary">none listed</span>}
                  </td>
                  <td data-label="Updated">
                    <TimeText iso={p.updated_at} />
                  </td>
                  <td>
                    <div class="provider-actions">
                      <button type="button" aria-label={`Add a key to ${p.provider}`} onClick={() => addKeyTo(p)}>
                        Add a key
                      </button>
                      {/* With one key, deleting the provider is deleting its key: named so. */}
                      <ConfirmButton
                        label={p.keys.length > 1 ? `Delete provider ${p.provider}` : `Delete key ${p.provider}`}
                        confirm={
                          p.keys.length > 1
                            ? `Delete ${p.provider} and its ${p.keys.length} keys`
                            : `Delete the ${p.provider} key`
                        }
                        onConfirm={async () => {
                          setDeleteError(null);
                          try {
                            await deleteProviderKey(apiKey, p.provider);
                          } catch (err) {
                            setDeleteError(asApiError(err).message);
                          }
                          reload();
                        }}
                      />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {deleteError && (
        <p role="alert" class="error">
          {deleteError}
        </p>
      )}
      {kindList.state === 'error' && (
        <p role="alert" class="error">
          The kinds of provider could not be listed: {kindList.message}
        </p>
      )}
      {/* Made from the kinds the server lists: shown once they are known. */}
      {kindList.state === 'done' && (
        <form class="settings-form" aria-label="Set a provider key" onSubmit={submit}>
          <h3>Set a provider key</h3>
          <p class="summary">
            Registers the provider, or changes it: its kind, base URL, models and options are set to these for all its
            keys. The key is added under its key ID, or replaces the key of that ID.
          </p>
          <div class="field">
            <label>
              Provider
              <input
                list="providers"
                required
                value={provider}
                onInput={(e) => setProvider(value(e))}
                {...fieldProps(error, FORM, 'provider')}
              />
              <datalist id="providers">
                {[...new Set([...kindNames, ...list.map((p) => p.provider)])].map((n) => (
                  <option key={n} value={n} />
                ))}
              </datalist>
            </label>
            <FieldError error={error} form={FORM} field="provider" />
          </div>
          <div class="field">
            <label>
              Kind
              <select value={kind} onChange={(e) => setKind(value(e))} {...fieldProps(error, FORM, 'kind')}>
                {kinds.map((k) => (
                  <option key={k.kind} value={k.kind}>
                    {kindText(k)}
                  </option>
                ))}
              </select>
            </label>
            <FieldError error={error} form={FORM} field="kind" />
          </div>
          <div class="field">
            <label>
              API key
              <input
                type="password"
                autocomplete="off"
                ref={secretField}
                value={secret}
                onInput={(e) => setSecret(value(e))}
                {...fieldProps(error, FORM, 'api_key')}
              />
            </label>
            <FieldError error={error} form={FORM} field="api_key" />
          </div>
          <div class="field">
            <label>
              Base URL ({baseUrlNeeded ? 'required' : 'optional'})
              <input
                type="text"
                inputMode="url"
                aria-required={baseUrlNeeded}
                placeholder={kindOf(kind)?.base_url_hint}
                value={baseUrl}
                onInput={(e) => setBaseUrl(value(e))}
                {...fieldProps(error, FORM, 'base_url')}
              />
            </label>
            <FieldError error={error} form={FORM} field="base_url" />
          </div>
          {fields.map((field) => (
            <div class="field" key={field.name}>
              <label>
                {field.label} ({field.required ? 'required' : 'optional'})
                <input
                  value={options[field.name] ?? ''}
                  placeholder={field.placeholder}
                  inputMode={field.numeric ? 'decimal' : undefined}
                  aria-required={field.required}
                  title={field.description || undefined}
                  onInput={(e) => setOptions({ ...options, [field.name]: value(e) })}
                  {...fieldProps(error, FORM, field.name)}
                />
              </label>
              <FieldError error={error} form={FORM} field={field.name} />
            </div>
          ))}
          <div class="field">
            <label>
              Models (optional)
              <input
                value={models}
                placeholder="llama-*, mixtral-8x7b"
                onInput={(e) => setModels(value(e))}
                {...fieldProps(error, FORM, 'models', `${FORM}-models-hint`)}
              />
            </label>
            <span id={`${FORM}-models-hint`} class="field-hint">
              Names and prefix* patterns, comma-separated: calls naming them go to this provider.
            </span>
            <FieldError error={error} form={FORM} field="models" />
          </div>
          <div class="field">
            <label>
              Key ID (optional)
              <input
                value={keyId}
                placeholder={DEFAULT_KEY_ID}
                onInput={(e) => setKeyId(value(e))}
                {...fieldProps(error, FORM, 'key_id')}
              />
            </label>
            <FieldError error={error} form={FORM} field="key_id" />
          </div>
          <div class="field">
            <label>
              Weight (optional)
              <input
                type="text"
                inputMode="decimal"
                value={weight}
                placeholder="1"
                onInput={(e) => setWeight(value(e))}
                {...fieldProps(error, FORM, 'weight')}
              />
            </label>
            <FieldError error={error} form={FORM} field="weight" />
          </div>
          {registered && (
            <p class="summary" role="note">
              {registered.provider} is registered: saving sets its kind, base URL, models and options to these, and{' '}
              {registered.keys.some((k) => k.key_id === id) ? `replaces its key ${id}` : `adds the key ${id}`}.
            </p>
          )}
          <FormError error={error} fields={formFields} />
          {saved && (
            <p role="status" class="good">
              {saved}
            </p>
          )}
          <div class="actions">
            <button type="submit" disabled={busy}>
              Save key
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
