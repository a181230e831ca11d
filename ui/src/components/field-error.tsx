/**
 * An API error shown where the user can act on it: next to the field the server names (error.param,
 * e.g. "api_key" or "base_url"), the field marked invalid; an error naming no field of the form is
 * shown once for the whole form. The message is the API's own (the one error envelope).
 */
import { ApiError } from '../api';

/** Any failure as an ApiError: a network failure or a bug has no field. */
export const asApiError = (err: unknown): ApiError =>
  err instanceof ApiError ? err : new ApiError(0, 'error', err instanceof Error ? err.message : String(err));

/**
 * What the form found wrong with a field before sending anything, as the API's refusal of it would be:
 * shown next to the field the same way.
 */
export const fieldProblem = (field: string, message: string): ApiError =>
  new ApiError(400, 'invalid_field', message, field);

/** Whether the error is about this field (or a part of it: "metrics.cost" is about "metrics"). */
export const isAbout = (error: ApiError | null, field: string): boolean =>
  error !== null && error.param !== null && (error.param === field || error.param.startsWith(`${field}.`));

/**
 * The attributes of an input whose field the error may name: invalid, described by its message (after
 * its hint, the id of a line that always explains it, when it has one).
 */
export function fieldProps(error: ApiError | null, form: string, field: string, hint?: string) {
  const about = isAbout(error, field);
  const describedBy = [hint, about ? `${form}-${field}-error` : undefined].filter(Boolean).join(' ');
  return {
    'aria-invalid': about ? (true as const) : undefined,
    'aria-describedby': describedBy === '' ? undefined : describedBy,
  };
}

export function FieldError({ error, form, field }: { error: ApiError | null; form: string; field: string }) {
  if (!isAbout(error, field)) return null;
  return (
    <span id={`${form}-${field}-error`} role="alert" class="field-error">
      {error!.message}
    </span>
  );
}

/** The error when it names none of the form's fields. */
export function FormError({ error, fields }: { error: ApiError | null; fields: readonly string[] }) {
  if (error === null || fields.some((f) => isAbout(error, f))) return null;
  return (
    <p role="alert" class="error">
      {error.message}
    </p>
  );
}
