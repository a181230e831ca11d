/**
 * Bounds on what one list call may ask for, so that no filter can cost more than the databases take
 * or than a list should: SQLite's expression depth (1,000) and bound-variable count (32,766), and the
 * time of one query. Beyond them a call gets a 400 naming the filter, never a database error.
 */
import { AppError } from '../errors.js';
import type { FilterNode } from './types.js';

/** Values one filter may hold (after an `in` value is split on commas). */
export const MAX_VALUES_PER_FILTER = 500;
/** Filters one call may hold, body and URL together. */
export const MAX_FILTERS = 50;
/** Integer filter values are 32-bit, as the integer columns are on PostgreSQL. */
export const MAX_INTEGER = 2_147_483_647;

export function countLeaves(node: FilterNode | null): number {
  if (node === null) return 0;
  return node.kind === 'leaf' ? 1 : node.children.reduce((sum, child) => sum + countLeaves(child), 0);
}

/** A 400 naming `param` when a call holds more than MAX_FILTERS filters. */
export function checkFilterCount(count: number, param: string): void {
  if (count > MAX_FILTERS) {
    throw new AppError(
      400,
      'too_many_filters',
      `The call holds ${count} filters; at most ${MAX_FILTERS} are allowed.`,
      param,
    );
  }
}
