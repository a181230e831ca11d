/**
 * How long the organization's logs are kept: its retention and content retention in days, read from GET
 * /api/settings/ and saved with PATCH (only what changed). Blank takes the server's setting (null in the
 * API); 0 keeps logs forever, or their content as long as the log.
 */
import { useState } from 'preact/hooks';
import type { OrgSettingsPatch } from '../api-pages';
import { retentionDays, retentionText } from '../lib/retention-days';
import { FieldError, fieldProblem, fieldProps } from './field-error';
import { SettingsFormEnd, SettingsLoading, useSettingsForm } from './settings-form';

const FORM = 'retention-settings';
const SETTINGS = [
  {
    name: 'retention_days',
    label: 'Delete logs after (days)',
    hint: 'retention_days: logs older than this are deleted with their scores. 0 keeps them forever; blank takes the server’s setting (GATELOG_RETENTION_DAYS).',
  },
  {
    name: 'content_retention_days',
    label: 'Clear what was said after (days)',
    hint: 'content_retention_days: older logs lose their input, output and messages and keep tokens, cost, latency, metadata and scores. 0 keeps the content as long as the log; blank takes the server’s setting (GATELOG_CONTENT_RETENTION_DAYS).',
  },
] as const;
type Setting = (typeof SETTINGS)[number]['name'];
const FIELDS = SETTINGS.map((s) => s.name);

/** A saved setting said in words. */
const saidAs = (days: number | null, zero: string) =>
  days === null ? 'as the server’s setting says' : days === 0 ? zero : `${days} ${days === 1 ? 'day' : 'days'}`;

export function RetentionSettings({ apiKey }: { apiKey: string }) {
  const [typed, setTyped] = useState<Record<Setting, string>>({ retention_days: '', content_retention_days: '' });
  const form = useSettingsForm(apiKey, (s) =>
    setTyped({
      retention_days: retentionText(s.retention_days),
      content_retention_days: retentionText(s.content_retention_days),
    }),
  );
  const { saved, error } = form;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!saved) return;
    form.begin();
    const patch: OrgSettingsPatch = {};
    for (const { name } of SETTINGS) {
      const read = retentionDays(typed[name]);
      if ('problem' in read) {
        form.setError(fieldProblem(name, `${name}: ${read.problem}`));
        return;
      }
      if (read.days !== saved[name]) patch[name] = read.days;
    }
    await form.save(
      patch,
      (next) =>
        `Saved: logs are kept ${saidAs(next.retention_days, 'forever')}, what was said ${saidAs(
          next.content_retention_days,
          'as long as its log',
        )}.`,
    );
  };

  return (
    <section aria-labelledby="retention-title" class="settings-part">
      <h2 id="retention-title">Retention</h2>
      <p class="summary">
        How long this organization’s logs are kept. A sweep applies these every few minutes; copies of logs in datasets
        are the dataset’s and stay.
      </p>
      <SettingsLoading loaded={form.loaded} />
      {saved && (
        <form class="settings-form" aria-label="Retention settings" onSubmit={submit}>
          {SETTINGS.map((s) => (
            <div class="field" key={s.name}>
              <label for={`${FORM}-${s.name}`}>{s.label}</label>
              <input
                id={`${FORM}-${s.name}`}
                type="text"
                inputMode="numeric"
                placeholder="server’s setting"
                value={typed[s.name]}
                onInput={(e) => setTyped({ ...typed, [s.name]: (e.currentTarget as HTMLInputElement).value })}
                {...fieldProps(error, FORM, s.name, `${FORM}-${s.name}-hint`)}
              />
              <span id={`${FORM}-${s.name}-hint`} class="field-hint">
                {s.hint}
              </span>
              <FieldError error={error} form={FORM} field={s.name} />
            </div>
          ))}
          <SettingsFormEnd error={error} fields={FIELDS} status={form.status} busy={form.busy} label="Save retention" />
        </form>
      )}
    </section>
  );
}
