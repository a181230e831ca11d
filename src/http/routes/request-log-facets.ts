/**
 * GET|POST /api/request-logs/facets/ (docs/api.md "Facet counts"): filter_options whose value counts
 * honour every active filter but the field's own, for a filter UI to refresh beside the list.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { withQueryBudget } from '../../db/query-budget.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import { FilterOptions, filterBodySchema } from '../../filters/schema.js';
import { honouredFacetOptions } from '../../logs/list/facet-counts.js';
import { LOG_SCOPE_QUERY, logSelectionOf } from '../plumbing/log-scope-params.js';
import { AUTHENTICATED_ERRORS, BODY_ERRORS, errors, validatedByHandler } from '../plumbing/schemas.js';

/** The scope's parameters; every other parameter is a URL quick filter, as on the list. */
const FacetsQuery = z.looseObject({ ...LOG_SCOPE_QUERY });
type FacetsQuery = z.output<typeof FacetsQuery>;

const FacetsAnswer = z.object({
  filter_options: FilterOptions.describe(
    "As the list's filter_options, but each field's value_choices counted among the logs matching every filter on another field",
  ),
});

export function registerFacetRoutes(app: FastifyInstance, deps: AppDeps): void {
  const facets = async (request: FastifyRequest, reply: FastifyReply) => {
    const { scope, filter } = logSelectionOf(request, reply, request.query as FacetsQuery);
    // Read on the read connections, within the request's query budget (GATELOG_QUERY_TIMEOUT_MS).
    const options = await withQueryBudget(reply, deps.config.queryTimeoutMs, () =>
      honouredFacetOptions(deps.db.reader, deps.db.dialect, scope, filter),
    );
    return reply.send({ filter_options: options });
  };
  const schema = (method: 'GET' | 'POST') => ({
    tags: ['Logs'],
    summary: 'Facet counts that honour the other filters (docs/api.md "Facet counts")',
    description:
      "The list's scope and filters (URL quick filters, and body filters on POST). Each field's value_choices " +
      'are counted among the logs that match every filter except those on that field itself.',
    querystring: FacetsQuery,
    ...(method === 'POST' ? { body: validatedByHandler(filterBodySchema(LOG_FIELDS)) } : {}),
    response: { 200: FacetsAnswer, ...errors(...(method === 'POST' ? BODY_ERRORS : AUTHENTICATED_ERRORS)) },
  });
  app.get('/api/request-logs/facets/', { schema: schema('GET') }, facets);
  app.post('/api/request-logs/facets/', { schema: schema('POST') }, facets);
}
