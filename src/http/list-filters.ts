/** The filter of a list call: URL quick filters and body filters over the list's registry (docs/api.md "Filter language"). */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { checkFilterCount, countLeaves } from '../filters/limits.js';
import { parseBodyFilters } from '../filters/parse-body.js';
import { parseUrlFilters } from '../filters/parse-url.js';
import type { FieldRegistry } from '../filters/registry.js';
import { and, type FilterNode } from '../filters/types.js';

/** URL quick filters folded, ANDed with the body filters on fields the URL does not filter. */
export function listFilter(request: FastifyRequest, registry: FieldRegistry): FilterNode | null {
  return filterOf(new URL(request.url, 'http://localhost').searchParams, request.body, registry);
}

/** The same from a query string and a body kept apart from their request (an export token's). */
export function filterOf(search: URLSearchParams, body: unknown, registry: FieldRegistry): FilterNode | null {
  if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
    throw new AppError(400, 'invalid_value', 'The body must be a JSON object {"filters": {...}}.', null);
  }
  const url = parseUrlFilters(registry, search);
  const leaves = parseBodyFilters(registry, (body as { filters?: unknown } | undefined)?.filters).filter(
    (leaf) => !url.fields.has(leaf.target.name),
  );
  checkFilterCount(leaves.length + countLeaves(url.node), 'filters');
  const parts: FilterNode[] = url.node ? [...leaves, url.node] : leaves;
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : and(parts);
}
