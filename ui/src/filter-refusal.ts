/**
 * Why filters were not applied, as the filter bar says it (components/filter-bar.tsx): a field the
 * filter language does not know, caught before anything is sent, or the API's 400 naming
 * `filters.<field>`. The explorer and the sessions page read their refusals here.
 */
import { ApiError } from './api';
import { FILTER_FIELDS, fieldsInMessage, isKnownField, nearestField, type Refusal } from './lib/filter-fields';
import type { Condition } from './lib/view-state';

/** A filter the API refused (400 naming filters.<field>…) as a refusal; null for any other error. */
export function refusalOf(err: unknown): Refusal | null {
  if (!(err instanceof ApiError) || err.status !== 400 || !err.param?.startsWith('filters')) return null;
  const field = err.param.split('.')[1] ?? '';
  const listed = fieldsInMessage(err.message);
  const fields = listed && listed.length > 0 ? listed : FILTER_FIELDS;
  const near = err.code === 'unknown_field' ? nearestField(field, fields) : null;
  // The API's message lists the fields; they are shown apart, folded.
  const message = err.message.replace(/; filterable: .*$/, '.');
  return { message, suggestion: near ? { from: field, to: near } : null, fields };
}

/** Checked before anything is sent: a field the filter language does not know. */
export function checkFields(conditions: readonly Condition[]): Refusal | null {
  const unknown = conditions.find((c) => !isKnownField(c.field));
  if (!unknown) return null;
  const near = nearestField(unknown.field);
  return {
    message: `Unknown filter field '${unknown.field}'.`,
    suggestion: near ? { from: unknown.field, to: near } : null,
    fields: FILTER_FIELDS,
  };
}
