/**
 * The sort of a list, from its registry's sortable fields (docs/api.md "Listing logs"): a name, `-` before
 * it for descending, or scores__<evaluator_id> where the list has scores. Ties break by id in the same
 * direction, nulls last (the list's query applies that).
 */
import { AppError } from '../errors.js';
import { hasNul } from '../util/nul.js';
import type { FieldRegistry } from './registry.js';

export type ListSort =
  | { kind: 'column'; name: string; column: string; descending: boolean }
  | { kind: 'score'; evaluatorId: string; descending: boolean };

/** What the sort parameter takes, in words. */
export function sortChoices(registry: FieldRegistry): string {
  const names = [...registry.sortable.keys(), ...(registry.scores ? ['scores__<evaluator_id>'] : [])];
  return `${names.join(', ')}, each optionally prefixed by -`;
}

export function parseSort(registry: FieldRegistry, raw: string | undefined, param: string): ListSort {
  const value = (raw ?? registry.defaultSort).trim() || registry.defaultSort;
  const descending = value.startsWith('-');
  const name = descending ? value.slice(1) : value;
  if (registry.scores && name.startsWith('scores__') && name.length > 'scores__'.length && !hasNul(name)) {
    return { kind: 'score', evaluatorId: name.slice('scores__'.length), descending };
  }
  const column = registry.sortable.get(name);
  if (!column) {
    throw new AppError(
      400,
      'invalid_parameter',
      `${param} '${value}' is not allowed; allowed: ${sortChoices(registry)}.`,
      param,
    );
  }
  return { kind: 'column', name, column, descending };
}
