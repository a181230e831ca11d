/**
 * What the parts of the settings page that edit the organization's settings share (the response
 * cache's defaults, the retention): the settings read once, a form filled from them, only what changed
 * sent with PATCH, the answer shown again, and a status or the API's error where the field is.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ApiError } from '../api';
import { getSettings, patchSettings, type OrgSettings, type OrgSettingsPatch } from '../api-pages';
import { type Loaded, useLoad } from '../use-load';
import { FormError } from './field-error';
import { useSubmit } from './use-submit';

/**
 * The organization's settings for one form: `fill` puts settings into the form's fields (when read and
 * after each save); `save` sends a patch (or says nothing changed) and `said` words the saved result.
 */
export function useSettingsForm(apiKey: string, fill: (s: OrgSettings) => void) {
  const [loaded] = useLoad<OrgSettings>(() => getSettings(apiKey), [apiKey]);
  // The settings as gatelog last answered them: what the form's changes are measured from.
  const [saved, setSaved] = useState<OrgSettings | null>(null);
  const { busy, error, setError, run } = useSubmit();
  const [status, setStatus] = useState<string | null>(null);

  const show = (s: OrgSettings) => {
    setSaved(s);
    fill(s);
  };
  useEffect(() => {
    if (loaded.state === 'done') show(loaded.value);
  }, [loaded]);

  /** Clears the last status and error: a submit starts here. */
  const begin = () => {
    setError(null);
    setStatus(null);
  };

  const save = async (patch: OrgSettingsPatch, said: (next: OrgSettings) => string) => {
    if (Object.keys(patch).length === 0) {
      setStatus('Nothing changed.');
      return;
    }
    await run(async () => {
      const next = await patchSettings(apiKey, patch);
      show(next);
      setStatus(said(next));
    });
  };

  return { loaded, saved, error, setError, busy, status, begin, save };
}

/** "Loading…", or why the settings could not be read. */
export function SettingsLoading({ loaded }: { loaded: Loaded<OrgSettings> }) {
  if (loaded.state === 'loading') return <p class="summary">Loading…</p>;
  if (loaded.state === 'error') {
    return (
      <p role="alert" class="error">
        The settings could not be read: {loaded.message}
      </p>
    );
  }
  return null;
}

/** The end of a settings form: an error naming none of its fields, the last status, the save button. */
export function SettingsFormEnd(props: {
  error: ApiError | null;
  fields: readonly string[];
  status: string | null;
  busy: boolean;
  label: string;
}) {
  return (
    <>
      <FormError error={props.error} fields={props.fields} />
      {props.status && (
        <p role="status" class="good">
          {props.status}
        </p>
      )}
      <div class="actions wide">
        <button type="submit" disabled={props.busy}>
          {props.label}
        </button>
      </div>
    </>
  );
}
