/** The filter of a list call: URL quick filters and body filters over the list's registry (docs/api.md "Filter language"). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { checkFilterCount, countLeaves } from '../../filters/limits.js';
import { parseBodyFilters } from '../../filters/parse-body.js';
import { parseUrlFilters } from '../../filters/parse-url.js';
import type { FieldRegistry } from '../../filters/registry.js';
import { and, type FilterNode } from '../../filters/types.js';

/**
 * Names the URL quick filters that were read as metadata (docs/api.md "URL quick filters"): each name
 * as written in the URL, percent-encoded as in a URL (encodeURIComponent), joined by commas, in the
 * order of the URL. Absent when there are none.
 */
export const METADATA_FILTERS_HEADER = 'X-Gatelog-Metadata-Filters';

/**
 * The header stays within what every HTTP client reads (some stop at 16 KB of headers): names that
 * would take it past this are left out.
 */
export const METADATA_FILTERS_HEADER_MAX = 4096;

export function metadataFiltersHeader(names: readonly string[]): string | null {
  let value = '';
  for (const name of names) {
    const next = value === '' ? encodeURIComponent(name) : `${value},${encodeURIComponent(name)}`;
    if (next.length > METADATA_FILTERS_HEADER_MAX) break;
    value = next;
  }
  return value === '' ? null : value;
}

/**
 * URL quick filters folded, ANDed with the body filters on fields the URL does not filter. The answer
 * gets METADATA_FILTERS_HEADER when some URL names were read as metadata.
 */
export function listFilter(request: FastifyRequest, reply: FastifyReply, registry: FieldRegistry): FilterNode | null {
  return filterOf(new URL(request.url, 'http://localhost').searchParams, request.body, registry, reply);
}

/** The same from a query string and a body kept apart from their request (an export token's). */
export function filterOf(
  search: URLSearchParams,
  body: unknown,
  registry: FieldRegistry,
  reply: FastifyReply,
): FilterNode | null {
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
    throw new AppError(400, 'invalid_value', 'The body must be a JSON object {"filters": {...}}.', null);
  }
  const url = parseUrlFilters(registry, search);
  const header = metadataFiltersHeader(url.readAsMetadata);
  if (header !== null) reply.header(METADATA_FILTERS_HEADER, header);
  const leaves = parseBodyFilters(registry, (body as { filters?: unknown } | undefined)?.filters).filter(
    (leaf) => !url.fields.has(leaf.target.name),
  );
  checkFilterCount(leaves.length + countLeaves(url.node), 'filters');
  const parts: FilterNode[] = url.node ? [...leaves, url.node] : leaves;
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : and(parts);
}
