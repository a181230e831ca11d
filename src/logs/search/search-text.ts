/**
 * What `search` looks in (docs/api.md "Filter language"): a log's words. The string values of its input,
 * output, prompt_messages, completion_message and tool_calls (JSON: keys, numbers and the JSON syntax
 * are left out, so `content` or `role` does not match every log, and a quote or a backslash is itself,
 * not its escape), then error_message; one value per line, lower-cased with JavaScript's Unicode-aware
 * toLowerCase. The index stores exactly this text, and a log not yet indexed is matched against it too.
 */

/** The columns of a log that hold its words. */
export const SEARCH_COLUMNS = [
  'input',
  'output',
  'prompt_messages',
  'completion_message',
  'tool_calls',
  'error_message',
] as const;

export type SearchSource = { [K in (typeof SEARCH_COLUMNS)[number]]: string | null };

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

function jsonStrings(text: string | null, out: string[]): void {
  if (text === null || text === '') return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (never written so, but a column is text): its text is the words.
    parsed = text;
  }
  collectStrings(parsed, out);
}

/** The log's searchable text, lower-cased; '' when it says nothing. */
export function searchText(log: SearchSource): string {
  const parts: string[] = [];
  jsonStrings(log.input, parts);
  jsonStrings(log.output, parts);
  // The same messages are often given as input and as prompt_messages: once is enough to find them.
  if (log.prompt_messages !== log.input) jsonStrings(log.prompt_messages, parts);
  if (log.completion_message !== log.output) jsonStrings(log.completion_message, parts);
  jsonStrings(log.tool_calls, parts);
  if (log.error_message) parts.push(log.error_message);
  return parts.join('\n').toLowerCase();
}

/** The terms of one search value: split on whitespace, lower-cased; none for a blank value. */
export const searchTerms = (value: string): string[] =>
  value
    .toLowerCase()
    .split(/\s+/u)
    .filter((t) => t !== '');

/** Whether a log's text (from searchText) holds every term of one value. */
export const textMatches = (text: string, terms: readonly string[]): boolean => terms.every((t) => text.includes(t));

/** The trigram index serves terms of at least three characters (code points); shorter ones are scanned. */
export const INDEXED_TERM_LENGTH = 3;
export const isIndexable = (term: string) => [...term].length >= INDEXED_TERM_LENGTH;
