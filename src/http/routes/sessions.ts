/**
 * GET|POST /api/sessions/ (docs/api.md "Sessions"): the logs of the list's scope and filters grouped by
 * thread_identifier — a coding agent's sessions — a page at a time.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { withQueryBudget } from '../../db/query-budget.js';
import { AppError } from '../../errors.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import { filterBodySchema } from '../../filters/schema.js';
import { listSessions, type SessionSort } from '../../logs/sessions/sessions.js';
import { LOG_SCOPE_QUERY, logSelectionOf, QUICK_FILTERS } from '../plumbing/log-scope-params.js';
import { pageOf } from '../plumbing/paging.js';
import { single } from '../plumbing/query-params.js';
import {
  AUTHENTICATED_ERRORS,
  BODY_ERRORS,
  errors,
  page,
  pageQuery,
  queryParam,
  Timestamp,
  validatedByHandler,
} from '../plumbing/schemas.js';

/** docs/api.md: sessions page by 50 unless told otherwise. */
export const SESSION_PAGE_SIZE = 50;

const SORTS = ['last_seen', 'cost'] as const;
const SORT_CHOICES = SORTS.flatMap((s) => [s, `-${s}`]).join(', ');

/** `last_seen` or `cost`, a leading `-` for descending, as the list's sort_by; default `-last_seen`. */
function parseSessionSort(raw: string | undefined): SessionSort {
  const value = raw?.trim() || '-last_seen';
  const descending = value.startsWith('-');
  const by = SORTS.find((s) => s === (descending ? value.slice(1) : value));
  if (!by)
    throw new AppError(
      400,
      'invalid_parameter',
      `sort_by '${value}' is not allowed; allowed: ${SORT_CHOICES}.`,
      'sort_by',
    );
  return { by, descending };
}

/** The route's own parameters; every other parameter is a URL quick filter, as on the list. */
const SessionsQuery = z.looseObject({
  ...pageQuery(SESSION_PAGE_SIZE),
  sort_by: queryParam(
    'sort_by',
    (q) => parseSessionSort(single(q, 'sort_by')),
    `${SORT_CHOICES}; - sorts descending (default -last_seen, the latest active first); ties by last_seen, then thread_identifier`,
  ),
  ...LOG_SCOPE_QUERY,
});
type SessionsQuery = z.output<typeof SessionsQuery>;

const names = (what: string) => z.array(z.string()).describe(`The distinct ${what} of its calls, sorted`);

const Session = z.object({
  thread_identifier: z.string(),
  first_seen: Timestamp.describe('Its first call in the range'),
  last_seen: Timestamp.describe('Its last call in the range'),
  calls: z.number().int(),
  errors: z.number().int().describe('Calls that failed (status_code 400 or more)'),
  cost: z.number().describe('USD, the sum of its calls’ costs (a call of unknown price counts 0)'),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  models: names('models'),
  keys: names('key names (organization_key__name)'),
  customers: names('customer_identifier values'),
});

export function registerSessionRoutes(app: FastifyInstance, deps: AppDeps): void {
  const sessions = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.query as SessionsQuery;
    const paging = { page: query.page, pageSize: query.page_size };
    const { scope, filter } = logSelectionOf(request, reply, query);
    // Read on the read connections, within the request's query budget (GATELOG_QUERY_TIMEOUT_MS).
    const { count, sessions: results } = await withQueryBudget(reply, deps.config.queryTimeoutMs, () =>
      listSessions(deps.db.reader, deps.db.dialect, { scope, filter, sort: query.sort_by, paging }),
    );
    return reply.send(pageOf(request, deps.config.publicUrl, paging, count, results));
  };
  const schema = (method: 'GET' | 'POST') => ({
    tags: ['Sessions'],
    summary: 'The matching logs grouped by thread_identifier: sessions, paginated (docs/api.md "Sessions")',
    description: `The list's scope and filters; only logs with a thread_identifier count. ${QUICK_FILTERS}`,
    querystring: SessionsQuery,
    ...(method === 'POST' ? { body: validatedByHandler(filterBodySchema(LOG_FIELDS)) } : {}),
    response: {
      200: page(Session).extend({ count: z.number().int().describe('How many sessions match in all') }),
      ...errors(...(method === 'POST' ? BODY_ERRORS : AUTHENTICATED_ERRORS)),
    },
  });
  app.get('/api/sessions/', { schema: schema('GET') }, sessions);
  app.post('/api/sessions/', { schema: schema('POST') }, sessions);
}
