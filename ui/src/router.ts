/**
 * The page's query string as a signal: every screen reads its state from it and changes it with `go`,
 * so that the URL stays the one source of truth (reload, back and forward, shared links).
 */
import { signal } from '@preact/signals';

export const search = signal(location.search);
addEventListener('popstate', () => (search.value = location.search));

/** Shows `query` ("?a=1", or "" for the log explorer's defaults): a new history entry unless `replace`. */
export function go(query: string, replace = false): void {
  const url = `${location.pathname}${query}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  search.value = query;
}
