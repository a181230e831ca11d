/**
 * The key form's rate limits (docs/api.md "Rate limits"): requests and tokens per minute, each a whole
 * number or empty. Made empty, a new key takes the limits of the key making it (when both are) or has
 * none; a changed key's empty limit is removed.
 */
import type { ApiError } from '../api';
import { type KeyFormValues, LIMITS } from '../lib/key-form';
import { FieldError, fieldProps } from './field-error';

/** The API's fields a refusal of these inputs names (`param`). */
export const LIMIT_FIELDS = LIMITS.map((l) => `rate_limits.${l.name}`);

interface Props {
  form: string;
  editing: boolean;
  values: KeyFormValues;
  error: ApiError | null;
  set(change: Partial<KeyFormValues>): void;
}

export function KeyLimitFields({ form, editing, values, error, set }: Props) {
  const hint = editing
    ? 'Empty: no limit.'
    : 'Empty: no limit. Both empty: the limits of the key you are signed in with.';
  return (
    <>
      {LIMITS.map((limit) => {
        const field = `rate_limits.${limit.name}`;
        const hintId = `${form}-${limit.value}-hint`;
        return (
          <div class="field" key={limit.name}>
            <label>
              {limit.label} (optional)
              <input
                type="text"
                inputMode="numeric"
                value={values[limit.value]}
                onInput={(e) => set({ [limit.value]: (e.currentTarget as HTMLInputElement).value })}
                {...fieldProps(error, form, field, hintId)}
              />
            </label>
            <span id={hintId} class="field-hint">
              {hint}
            </span>
            <FieldError error={error} form={form} field={field} />
          </div>
        );
      })}
    </>
  );
}
