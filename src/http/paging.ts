/** count/next/previous for paginated lists: absolute URLs of the same route and query, page changed. */
import type { FastifyRequest } from 'fastify';
import type { Paging } from '../util/paging.js';

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
