/**
 * The terms of a `search` filter value (docs/api.md "Filter language"), and the one rule they share with
 * the text they are looked for in (logs/search/search-text.ts): what neither database can store becomes
 * a space in both, so a term matches the index exactly as it matches a log read directly.
 */

/**
 * What neither database's text may hold, or what reads back differently: NUL (PostgreSQL refuses it)
 * and a lone UTF-16 surrogate (stored as U+FFFD). Each becomes a space, in the index and in the check
 * of an unindexed log alike.
 */
// eslint-disable-next-line no-control-regex -- NUL is the character looked for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with every character the index cannot store as a space. */
export const storableText = (text: string): string => text.replace(UNSTORABLE, ' ');

/** The terms of one search value: split on whitespace, lower-cased; none for a blank value. */
export const searchTerms = (value: string): string[] =>
  storableText(value.toLowerCase())
    .split(/\s+/u)
    .filter((t) => t !== '');
