/** count/next/previous for paginated lists: absolute URLs of the same route and query, page changed. */
import type { FastifyRequest } from 'fastify';
import { pageOffset, type Paging } from '../../util/paging.js';

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

function pageUrl(request: FastifyRequest, publicUrl: string | null, page: number): string {
  const base = publicUrl ?? `${request.protocol}://${request.host}`;
  const url = new URL(request.url, 'http://placeholder');
  url.searchParams.set('page', String(page));
  return `${base}${url.pathname}${url.search}`;
}

export function pageOf<T>(
  request: FastifyRequest,
  publicUrl: string | null,
  paging: Paging,
  count: number,
  results: T[],
): Page<T> {
  const { page, pageSize } = paging;
  return {
    count,
    next: page * pageSize < count ? pageUrl(request, publicUrl, page + 1) : null,
    previous:
      page > 1 ? pageUrl(request, publicUrl, Math.min(page - 1, Math.max(1, Math.ceil(count / pageSize)))) : null,
    results,
  };
}

/**
 * A page without its count (count=false or a cursor): `next` is the same route and query with the
 * cursor after this page — or, in a sort a cursor cannot follow, the next page number — when there is
 * more; `previous` as pageOf's while paging by number, null by cursor (a keyset walks forward).
 */
export function keysetPageOf<T>(
  request: FastifyRequest,
  publicUrl: string | null,
  paging: Paging,
  after: { cursor: string | null; more: boolean },
  results: T[],
): Omit<Page<T>, 'count'> & { count: null; next_cursor: string | null } {
  const base = publicUrl ?? `${request.protocol}://${request.host}`;
  const url = new URL(request.url, 'http://placeholder');
  const byCursor = url.searchParams.has('cursor') || after.cursor !== null;
  let next: string | null = null;
  if (after.cursor) {
    url.searchParams.delete('page');
    url.searchParams.set('cursor', after.cursor);
    next = `${base}${url.pathname}${url.search}`;
  } else if (after.more && !byCursor) {
    next = pageUrl(request, publicUrl, paging.page + 1);
  }
  const previous = !byCursor && paging.page > 1 ? pageUrl(request, publicUrl, paging.page - 1) : null;
  return { count: null, next, previous, results, next_cursor: after.cursor };
}

/** A list route's request: its page query as pageQuery reads it. */
type PagedRequest = FastifyRequest & { query: { page: number; page_size: number } };

const pagingOf = (request: PagedRequest): Paging => ({ page: request.query.page, pageSize: request.query.page_size });

/**
 * A page of the caller's organization's items, which the database reads a page at a time: `list` reads
 * the page's rows (its limit and offset) and how many there are in all; `view` makes each row an item.
 */
export async function pageOfQuery<Db, R, V>(
  request: PagedRequest,
  publicUrl: string | null,
  db: Db,
  list: (db: Db, organizationId: string, limit: number, offset: number) => Promise<{ count: number; rows: R[] }>,
  view: (row: R) => V,
): Promise<Page<V>> {
  const paging = pagingOf(request);
  const { count, rows } = await list(db, request.auth.organizationId, paging.pageSize, pageOffset(paging));
  return pageOf(request, publicUrl, paging, count, rows.map(view));
}

/**
 * A page of a list read whole (an organization's keys, budgets, rate limits: never many): the page's
 * slice of `items`, made into items by `view` (given the whole slice, so that what it reads besides is
 * read once for the page).
 */
export async function pageOfList<T, V>(
  request: PagedRequest,
  publicUrl: string | null,
  items: readonly T[],
  view: (shown: T[]) => V[] | Promise<V[]>,
): Promise<Page<V>> {
  const paging = pagingOf(request);
  const offset = pageOffset(paging);
  const shown = items.slice(offset, offset + paging.pageSize);
  return pageOf(request, publicUrl, paging, items.length, await view(shown));
}
