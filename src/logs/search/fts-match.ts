/**
 * The FTS5 query of one search value's long terms on SQLite (docs/decisions.md "Search: bounded terms").
 *
 * A trigram phrase costs, on each log it is tested on, one position list per trigram of the phrase: a
 * trigram the phrase holds twice is read and held twice. A term of a thousand `a`s is a phrase of 998
 * copies of `aaa`, and over a log holding a long run of `a`s each copy holds that log's whole list: it
 * was gigabytes and minutes for one call, inside a row where no stop point is reached. So every
 * trigram is asked for once per value: each term's phrase is the longest start of it whose trigrams are
 * all new; a term that phrase does not cover whole adds its other new trigrams one by one (at most
 * MAX_PHRASE_TRIGRAMS per term in all) and is checked exactly with `instr` on the logs the phrases
 * leave. A log's lists of distinct trigrams together are no longer than its text, so what one log costs
 * is bounded by its own size, whatever the terms.
 */
import { isIndexable } from './search-text.js';

/** Trigrams one term's phrase holds at most: past this many, a real text's phrase is already rare. */
export const MAX_PHRASE_TRIGRAMS = 32;

export interface FtsMatch {
  /** The MATCH expression: one phrase per term that needs one, ANDed; null when there are no long terms. */
  match: string | null;
  /** Terms the phrases do not decide: each is checked with instr on the stored text. */
  checked: string[];
}

/** An FTS5 phrase: the text in double quotes, its own quotes doubled. */
const ftsPhrase = (text: string) => `"${text.replace(/"/g, '""')}"`;

/** The phrases and exact checks of one value's terms (lower-cased, as searchTerms gives them). */
export function ftsMatch(terms: readonly string[]): FtsMatch {
  const used = new Set<string>();
  const phrases: string[] = [];
  const checked: string[] = [];
  for (const term of new Set(terms)) {
    if (!isIndexable(term)) {
      checked.push(term);
      continue;
    }
    // The trigram tokenizer's tokens: every three consecutive characters (code points).
    const chars = [...term];
    const trigrams = chars.slice(0, -2).map((_, i) => chars[i] + chars[i + 1] + chars[i + 2]);
    let taken = 0;
    const own = new Set<string>();
    while (taken < trigrams.length && taken < MAX_PHRASE_TRIGRAMS) {
      const trigram = trigrams[taken];
      if (used.has(trigram) || own.has(trigram)) break;
      own.add(trigram);
      taken++;
    }
    if (taken === trigrams.length) {
      phrases.push(ftsPhrase(term));
    } else {
      checked.push(term);
      if (taken > 0) phrases.push(ftsPhrase(chars.slice(0, taken + 2).join('')));
      // The rest of its new trigrams narrow further, each asked for alone (once).
      for (const trigram of trigrams.slice(taken)) {
        if (own.size >= MAX_PHRASE_TRIGRAMS) break;
        if (used.has(trigram) || own.has(trigram)) continue;
        own.add(trigram);
        phrases.push(ftsPhrase(trigram));
      }
    }
    for (const trigram of own) used.add(trigram);
  }
  return { match: phrases.length > 0 ? phrases.join(' ') : null, checked };
}
