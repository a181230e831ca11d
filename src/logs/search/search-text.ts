/**
 * What `search` looks in (docs/api.md "Filter language"): a log's words. The string values of its input,
 * output, prompt_messages, completion_message and tool_calls (JSON: keys, numbers and the JSON syntax
 * are left out, so `content` or `role` does not match every log, and a quote or a backslash is itself,
 * not its escape), then error_message; one value per line, lower-cased with JavaScript's Unicode-aware
 * toLowerCase. The index stores exactly this text, and a log not yet indexed is matched against it too.
 *
 * Of each field only the first SEARCH_FIELD_CHARS characters of its stored text are read (docs/decisions.md
 * "Search: a capped prefix of each field"): a 5 MB answer costs the index what a 32 KB one does. A value
 * said twice (the answer in `output` and again in `completion_message`, the messages in `input` and
 * `prompt_messages`) is kept once.
 */
import { storableText } from '../../filters/search-terms.js';
import { prefixJsonStrings } from './json-prefix-strings.js';

/** The columns of a log that hold its words. */
export const SEARCH_COLUMNS = [
  'input',
  'output',
  'prompt_messages',
  'completion_message',
  'tool_calls',
  'error_message',
] as const;

/** The columns stored as JSON text (error_message is plain text). */
const JSON_COLUMNS = new Set<string>(SEARCH_COLUMNS.filter((c) => c !== 'error_message'));

/**
 * How much of each field is searchable: its first this many characters (Unicode code points, as SQL's
 * substr counts them) as stored — the JSON text for the JSON fields.
 */
export const SEARCH_FIELD_CHARS = 32_768;

export type SearchSource = { [K in (typeof SEARCH_COLUMNS)[number]]: string | null };

/**
 * The first `limit` code points of a text, and whether there was more: what SQL's
 * `substr(text, 1, limit + 1)` (search-store.ts) reads, told apart from the whole.
 */
export function fieldPrefix(text: string, limit = SEARCH_FIELD_CHARS): { text: string; cut: boolean } {
  if (text.length <= limit) return { text, cut: false };
  let points = 0;
  let i = 0;
  while (i < text.length && points < limit) {
    const c = text.charCodeAt(i);
    // A surrogate pair is one code point (two UTF-16 units).
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
    points++;
  }
  return i < text.length ? { text: text.slice(0, i), cut: true } : { text, cut: false };
}

/** Every string in a JSON value, depth first. */
function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    if (value !== '') out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) collectStrings(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) collectStrings(v, out);
  }
}

/**
 * The words of a log, each value once. A value cut by the prefix is a prefix of the same value read
 * whole or cut later elsewhere (the answer's text in `output` and in `completion_message`): the longer
 * one is kept. Terms hold no line break, so dropping a value another one starts with finds nothing less.
 */
class Words {
  private readonly kept: string[] = [];
  private readonly seen = new Set<string>();
  /** Indexes in `kept` of values cut short (one per field at most). */
  private readonly cut: number[] = [];

  add(value: string, isCut: boolean): void {
    if (value === '' || this.seen.has(value)) return;
    if (isCut && this.kept.some((k) => k.startsWith(value))) return;
    for (const [n, index] of this.cut.entries()) {
      if (!value.startsWith(this.kept[index])) continue;
      this.seen.delete(this.kept[index]);
      this.kept[index] = value;
      this.seen.add(value);
      if (!isCut) this.cut.splice(n, 1);
      return;
    }
    this.seen.add(value);
    if (isCut) this.cut.push(this.kept.length);
    this.kept.push(value);
  }

  text(): string {
    return this.kept.join('\n');
  }
}

function addField(stored: string | null, json: boolean, words: Words): void {
  if (stored === null || stored === '') return;
  const { text, cut } = fieldPrefix(stored);
  if (!json) return words.add(text, cut);
  if (cut) {
    const trimmed = text.trimStart();
    // Every JSON field is written as JSON; a prefix that does not start like it is read as words.
    if (!/^[[{"]/.test(trimmed)) return words.add(text, true);
    const { strings, lastCut } = prefixJsonStrings(trimmed);
    strings.forEach((s, i) => words.add(s, lastCut && i === strings.length - 1));
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (never written so, but a column is text): its text is the words.
    parsed = text;
  }
  const strings: string[] = [];
  collectStrings(parsed, strings);
  for (const s of strings) words.add(s, false);
}

/** The log's searchable text, lower-cased; '' when it says nothing. */
export function searchText(log: SearchSource): string {
  const words = new Words();
  for (const column of SEARCH_COLUMNS) {
    // The same messages are often given as input and as prompt_messages: read once.
    if (column === 'prompt_messages' && log.prompt_messages === log.input) continue;
    if (column === 'completion_message' && log.completion_message === log.output) continue;
    addField(log[column], JSON_COLUMNS.has(column), words);
  }
  return storableText(words.text().toLowerCase());
}

/** Whether a log's text (from searchText) holds every term of one value. */
export const textMatches = (text: string, terms: readonly string[]): boolean => terms.every((t) => text.includes(t));

/** The trigram index serves terms of at least three characters (code points); shorter ones are scanned. */
export const INDEXED_TERM_LENGTH = 3;
export const isIndexable = (term: string) => [...term].length >= INDEXED_TERM_LENGTH;
