/**
 * The response cache's part of the settings: the organization's defaults (on or off, how long an answer
 * is kept, its two options) read from GET /api/settings/ and saved with PATCH (only what changed), and
 * emptying the cache (DELETE /api/cache/). A TTL is typed in a readable unit and sent as seconds.
 */
import { useState } from 'preact/hooks';
import { emptyCache, type OrgSettings, type OrgSettingsPatch } from '../api-pages';
import { ttlParts, ttlSeconds, ttlText, TTL_UNITS, type TtlUnit } from '../lib/cache-ttl';
import { ConfirmButton } from './confirm-button';
import { asApiError, FieldError, fieldProblem, fieldProps } from './field-error';
import { SettingsFormEnd, SettingsLoading, useSettingsForm } from './settings-form';

const FORM = 'cache-settings';
const OPTIONS = [
  {
    name: 'cache_by_customer',
    label: 'A cache per customer',
    hint: 'cache_by_customer: calls of different customer_identifier never share an answer.',
  },
  {
    name: 'omit_log',
    label: 'No log for a cache hit',
    hint: 'omit_log: a call answered from the cache writes no log, so it is not in the explorer.',
  },
] as const;
const FIELDS = ['cache_enabled', 'cache_ttl', ...OPTIONS.map((o) => `cache_options.${o.name}`)];

type CacheDefaults = Pick<OrgSettings, 'cache_enabled' | 'cache_ttl' | 'cache_options'>;

/** What differs between the settings as saved and as in the form: the PATCH body. */
function changes(saved: CacheDefaults, next: CacheDefaults): OrgSettingsPatch {
  const patch: OrgSettingsPatch = {};
  if (next.cache_enabled !== saved.cache_enabled) patch.cache_enabled = next.cache_enabled;
  if (next.cache_ttl !== saved.cache_ttl) patch.cache_ttl = next.cache_ttl;
  for (const { name } of OPTIONS) {
    if (next.cache_options[name] !== saved.cache_options[name]) {
      patch.cache_options = { ...patch.cache_options, [name]: next.cache_options[name] };
    }
  }
  return patch;
}

export function CacheSettings({ apiKey }: { apiKey: string }) {
  const [enabled, setEnabled] = useState(false);
  const [amount, setAmount] = useState('');
  const [unit, setUnit] = useState<TtlUnit>('days');
  const [options, setOptions] = useState<OrgSettings['cache_options']>({ cache_by_customer: false, omit_log: false });
  const form = useSettingsForm(apiKey, (s) => {
    setEnabled(s.cache_enabled);
    const ttl = ttlParts(s.cache_ttl);
    setAmount(String(ttl.amount));
    setUnit(ttl.unit);
    setOptions({ ...s.cache_options });
  });
  const { saved, error } = form;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!saved) return;
    form.begin();
    const ttl = ttlSeconds(amount, unit);
    if ('problem' in ttl) {
      // Said here, in the unit typed, rather than as the API's count of seconds.
      form.setError(fieldProblem('cache_ttl', `cache_ttl: ${ttl.problem}`));
      return;
    }
    await form.save(
      changes(saved, { cache_enabled: enabled, cache_ttl: ttl.seconds, cache_options: options }),
      (next) =>
        `Saved: the cache is ${next.cache_enabled ? 'on' : 'off'} by default, answers kept ${ttlText(next.cache_ttl)}.`,
    );
  };

  return (
    <section aria-labelledby="cache-title" class="settings-part">
      <h2 id="cache-title">Response cache</h2>
      <p class="summary">
        The same call sent twice is not paid twice: with the cache on, a chat completion or embedding gatelog has
        already answered is answered again from the cache, without calling the provider (cost 0; its log says it was a
        cache hit). These are the organization's defaults: a call's own <code>cache_enabled</code>,{' '}
        <code>cache_ttl</code> and <code>cache_options</code> win over them.
      </p>
      <SettingsLoading loaded={form.loaded} />
      {saved && (
        <form class="settings-form" aria-label="Response cache defaults" onSubmit={submit}>
          <div class="field wide">
            <label class="check">
              <input
                type="checkbox"
                checked={enabled}
                onChange={(e) => setEnabled((e.currentTarget as HTMLInputElement).checked)}
                {...fieldProps(error, FORM, 'cache_enabled', `${FORM}-enabled-hint`)}
              />
              Cache calls by default
            </label>
            <span id={`${FORM}-enabled-hint`} class="field-hint">
              cache_enabled: a call that does not say otherwise is answered from the cache when it holds the answer, and
              its answer is kept.
            </span>
            <FieldError error={error} form={FORM} field="cache_enabled" />
          </div>
          <div class="field">
            <span id={`${FORM}-ttl-label`}>Keep answers for</span>
            <div class="ttl-row">
              <input
                type="number"
                step="any"
                inputMode="decimal"
                aria-labelledby={`${FORM}-ttl-label`}
                value={amount}
                onInput={(e) => setAmount((e.currentTarget as HTMLInputElement).value)}
                {...fieldProps(error, FORM, 'cache_ttl', `${FORM}-ttl-hint`)}
              />
              <select
                aria-label="Unit of the time answers are kept"
                value={unit}
                onChange={(e) => setUnit((e.currentTarget as HTMLSelectElement).value as TtlUnit)}
              >
                {TTL_UNITS.map((u) => (
                  <option key={u.unit} value={u.unit}>
                    {u.unit}
                  </option>
                ))}
              </select>
            </div>
            <span id={`${FORM}-ttl-hint`} class="field-hint">
              cache_ttl: from 1 second to a year.
            </span>
            <FieldError error={error} form={FORM} field="cache_ttl" />
          </div>
          {OPTIONS.map((o) => (
            <div class="field" key={o.name}>
              <label class="check">
                <input
                  type="checkbox"
                  checked={options[o.name]}
                  onChange={(e) => setOptions({ ...options, [o.name]: (e.currentTarget as HTMLInputElement).checked })}
                  {...fieldProps(error, FORM, `cache_options.${o.name}`, `${FORM}-${o.name}-hint`)}
                />
                {o.label}
              </label>
              <span id={`${FORM}-${o.name}-hint`} class="field-hint">
                {o.hint}
              </span>
              <FieldError error={error} form={FORM} field={`cache_options.${o.name}`} />
            </div>
          ))}
          <SettingsFormEnd
            error={error}
            fields={FIELDS}
            status={form.status}
            busy={form.busy}
            label="Save cache settings"
          />
        </form>
      )}
      <EmptyCache apiKey={apiKey} />
    </section>
  );
}

/** Empties the organization's cache, asking first, then says how many answers went. */
function EmptyCache({ apiKey }: { apiKey: string }) {
  const [said, setSaid] = useState<{ good: boolean; text: string } | null>(null);
  return (
    <div class="cache-empty">
      <p class="summary">
        Emptying the cache removes every answer kept for this organization (an embedding's, input by input): the next
        call of each goes to the provider again.
      </p>
      <ConfirmButton
        label="Empty the cache"
        text="Empty the cache"
        confirm="Remove every cached answer"
        onConfirm={async () => {
          setSaid(null);
          try {
            const { deleted } = await emptyCache(apiKey);
            setSaid({
              good: true,
              text:
                deleted === 0
                  ? 'The cache was already empty.'
                  : `The cache is empty: ${deleted} cached ${deleted === 1 ? 'entry' : 'entries'} removed.`,
            });
          } catch (err) {
            setSaid({ good: false, text: `The cache could not be emptied: ${asApiError(err).message}` });
          }
        }}
      />
      {said && (
        <p role={said.good ? 'status' : 'alert'} class={said.good ? 'good' : 'error'}>
          {said.text}
        </p>
      )}
    </div>
  );
}
