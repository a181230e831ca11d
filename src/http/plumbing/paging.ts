/** count/next/previous for paginated lists: absolute URLs of the same route and query, page changed. */
import type { FastifyRequest } from 'fastify';
import type { Paging } from '../../util/paging.js';

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
