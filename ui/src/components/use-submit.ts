/**
 * A form's sending to the API: whether a send is under way (its submit button disabled meanwhile) and
 * the API's refusal of the last one, as an ApiError, so that FieldError shows it next to the field it
 * names (error.param) and FormError otherwise.
 */
import { useState } from 'preact/hooks';
import type { ApiError } from '../api';
import { asApiError } from './field-error';

export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  /**
   * One send: the last error cleared, busy while `send` runs, its failure kept as the error. What the
   * form finds wrong before sending is set with setError before calling this, not thrown from `send`:
   * the button is then never disabled, not even for a render, so it keeps the focus.
   */
  const run = async (send: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await send();
    } catch (err) {
      setError(asApiError(err));
    } finally {
      setBusy(false);
    }
  };

  return { busy, error, setError, run };
}
