/**
 * Bounds on what one list call may ask for, so that no filter can cost more than the databases take
 * or than a list should: SQLite's expression depth (1,000) and bound-variable count (32,766), and the
 * time of one query. Beyond them a call gets a 400 naming the filter, never a database error.
 */
import { AppError } from '../errors.js';
import { searchTerms } from './search-terms.js';
import type { FilterNode, FilterValue } from './types.js';

/** Values one filter may hold (after an `in` value is split on commas). */
export const MAX_VALUES_PER_FILTER = 500;
/** Filters one call may hold, body and URL together. */
export const MAX_FILTERS = 50;
/** Integer filter values are 32-bit, as the integer columns are on PostgreSQL. */
export const MAX_INTEGER = 2_147_483_647;
/**
 * Terms one `search` filter may hold, all its values together, and characters (code points) one term may
 * hold (docs/decisions.md "Search: bounded terms"). SQLite cannot stop in the middle of a row's work,
 * so these, not the query budget, are what keep one search's reads small.
 */
export const MAX_SEARCH_TERMS = 32;
export const MAX_SEARCH_TERM_CHARS = 256;

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

/** Whether `text` holds more than `max` code points, counted no further than that. */
function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A surrogate pair is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) i++;
    if (++count > max) return true;
  }
  return false;
}

/**
 * The terms of a `search` filter's values within MAX_SEARCH_TERMS and MAX_SEARCH_TERM_CHARS, or a 400
 * naming the value at fault: `param.N` when the values were given as a list, else `param`.
 */
export function checkSearchValues(values: readonly FilterValue[], param: string, listed: boolean): void {
  let terms = 0;
  values.forEach((value, index) => {
    const where = listed ? `${param}.${index}` : param;
    for (const term of searchTerms(String(value))) {
      if (longerThan(term, MAX_SEARCH_TERM_CHARS)) {
        throw new AppError(
          400,
          'value_too_long',
          `${where}: a search term holds at most ${MAX_SEARCH_TERM_CHARS} characters.`,
          where,
        );
      }
      if (++terms > MAX_SEARCH_TERMS) {
        throw new AppError(
          400,
          'too_many_terms',
          `${where}: a search filter holds at most ${MAX_SEARCH_TERMS} terms, all its values together.`,
          where,
        );
      }
    }
  });
}
