/**
 * The logging API and the request-log list (docs/api.md "Logging API", "Listing logs"):
 *   POST /api/request-logs/create/, POST /api/request-logs/batch/,
 *   GET|POST /api/request-logs/list/, GET /api/request-logs/, POST /api/request-logs/ (list or create),
 *   GET|PATCH|DELETE /api/request-logs/{unique_id}/.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireScope } from '../../auth/privilege.js';
import type { AppDeps } from '../../deps.js';
import { withQueryBudget } from '../../db/query-budget.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import { FilterOptions, filterBodySchema } from '../../filters/schema.js';
import { JSON_TEXT_COLUMNS } from '../../logs/json-text.js';
import { logFilterOptions } from '../../logs/list/filter-options.js';
import { isTimeOrder, listLogs } from '../../logs/list/list.js';
import { LogInput } from '../../logs/write/ingest-schema.js';
import { LogItem } from '../../logs/log-item.js';
import { pickFields } from '../../logs/present.js';
import { parseSort, sortChoices } from '../../filters/sort.js';
import {
  getLogItem,
  ingestBatch,
  ingestOne,
  MAX_BATCH,
  PatchLogBody,
  patchLog,
  removeLog,
} from '../../logs/service.js';
import {
  flagParam,
  itemFieldsParser,
  LOG_SCOPE_QUERY,
  logSelectionOf,
  QUICK_FILTERS,
} from '../plumbing/log-scope-params.js';
import { keysetPageOf, pageOf } from '../plumbing/paging.js';
import { AppError } from '../../errors.js';
import { parseCursor } from '../../logs/list/cursor.js';
import {
  AUTHENTICATED_ERRORS,
  BODY_ERRORS,
  ErrorEnvelope,
  errors,
  page,
  pageQuery,
  queryParam,
  validatedByHandler,
} from '../plumbing/schemas.js';
import { single } from '../plumbing/query-params.js';

/** Log fields stored as JSON text: a NUL character in them is stored escaped (\u0000), so it is allowed. */
const JSON_TEXT_FIELDS: ReadonlySet<string> = new Set(JSON_TEXT_COLUMNS);

/** docs/api.md: the request-log list pages by 100 unless told otherwise. */
export const REQUEST_LOG_PAGE_SIZE = 100;

const UniqueIdParams = z.object({ unique_id: z.string().describe("The log's unique_id") });

// The logging API validates each log itself, to name a batch entry by its index (logs.3.cost).
const CreateLogBody = validatedByHandler(
  LogInput.describe('A log: the fields of docs/api.md "The log record" a caller can know'),
);
const BatchBody = validatedByHandler(
  z.union([z.object({ logs: z.array(LogInput).min(1).max(MAX_BATCH) }), z.array(LogInput).min(1).max(MAX_BATCH)]),
);
const Created = z.object({ unique_id: z.string(), message: z.literal('log successful') });

/** The list's own parameters; every other parameter is a URL quick filter, parsed by the handler. */
const ListQuery = z.looseObject({
  ...pageQuery(REQUEST_LOG_PAGE_SIZE),
  sort_by: queryParam(
    'sort_by',
    (q) => parseSort(LOG_FIELDS, single(q, 'sort_by'), 'sort_by'),
    `${sortChoices(LOG_FIELDS)}; - sorts descending (default -id, newest first by timestamp; id and timestamp are the same order)`,
  ),
  ...LOG_SCOPE_QUERY,
  include_fields: queryParam(
    'include_fields',
    itemFieldsParser('include_fields'),
    'Comma-separated item fields to answer, whole; without it every field, large ones as previews',
  ),
  fetch_filters: flagParam('fetch_filters', 'true: answer filter_options too'),
  count: flagParam('count', 'false: the matches are not counted (count is null): the page comes sooner'),
  cursor: queryParam(
    'cursor',
    (q) => {
      const raw = single(q, 'cursor');
      return raw === undefined || raw === '' ? null : parseCursor(raw, 'cursor');
    },
    'A next_cursor from a list answer: the page after it in the time order (sort_by id or timestamp); page is then ignored and count null',
  ),
});
type ListQuery = z.output<typeof ListQuery>;

const ListBody = filterBodySchema(LOG_FIELDS);
const ListPage = page(
  LogItem.partial().describe(
    'A log: every field, large ones as previews named in truncated_fields; or only include_fields',
  ),
).extend({
  count: z.number().int().nullable().describe('How many logs match in all; null with count=false or a cursor'),
  next_cursor: z
    .string()
    .nullable()
    .describe('The cursor of the next page in the time order (sort_by id or timestamp), or null: no more logs'),
  filter_options: FilterOptions.optional().describe('With fetch_filters=true'),
});

/** A POST body whose only key is `filters` (or an empty body) asks for a list (docs/api.md "Logging API"). */
function isListBody(body: unknown): boolean {
  if (body === undefined || body === null) return true;
  if (typeof body !== 'object' || Array.isArray(body)) return false;
  return Object.keys(body).every((k) => k === 'filters');
}

export function registerRequestLogRoutes(app: FastifyInstance, deps: AppDeps): void {
  const list = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.query as ListQuery;
    const paging = { page: query.page, pageSize: query.page_size };
    const { scope, filter } = logSelectionOf(request, reply, query);
    const include = query.include_fields;
    if (query.cursor && !isTimeOrder(query.sort_by)) {
      throw new AppError(
        400,
        'invalid_parameter',
        'cursor pages through the time order only: sort_by id or timestamp (or -id, -timestamp).',
        'cursor',
      );
    }
    // Read on the read connections, within the request's query budget (GATELOG_QUERY_TIMEOUT_MS).
    const { count, items, nextCursor, more, filterOptions } = await withQueryBudget(
      reply,
      deps.config.queryTimeoutMs,
      async () => {
        const listed = await listLogs(deps.db.reader, deps.db.dialect, {
          scope,
          paging,
          filter,
          sort: query.sort_by,
          include,
          countMatches: query.count !== false,
          after: query.cursor,
        });
        return { ...listed, filterOptions: query.fetch_filters ? await logFilterOptions(deps.db.reader, scope) : null };
      },
    );
    const results = include ? items.map((i) => pickFields(i, include)) : items;
    const page =
      count === null
        ? keysetPageOf(request, deps.config.publicUrl, paging, { cursor: nextCursor, more }, results)
        : { ...pageOf(request, deps.config.publicUrl, paging, count, results), next_cursor: nextCursor };
    return reply.send(filterOptions ? { ...page, filter_options: filterOptions } : page);
  };
  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const uniqueId = await ingestOne(deps, request.auth, request.body);
    return reply.status(201).send({ unique_id: uniqueId, message: 'log successful' });
  };

  // NUL characters may be where a log holds JSON text (stored escaped), nowhere else.
  const createConfig = {
    config: { nulAllowed: (path: readonly (string | number)[]) => JSON_TEXT_FIELDS.has(String(path[0])) },
  };
  const batchConfig = {
    config: {
      nulAllowed: (path: readonly (string | number)[]) =>
        JSON_TEXT_FIELDS.has(String(path[0] === 'logs' ? path[2] : path[1])),
    },
  };

  const listTags = ['Logs'];
  const listSchema = (method: string) => ({
    tags: listTags,
    summary: 'List logs: filtered, sorted, paginated (docs/api.md "Listing logs")',
    description: QUICK_FILTERS,
    querystring: ListQuery,
    ...(method === 'POST' ? { body: validatedByHandler(ListBody) } : {}),
    response: { 200: ListPage, ...errors(...(method === 'POST' ? BODY_ERRORS : AUTHENTICATED_ERRORS)) },
  });
  app.get('/api/request-logs/list/', { schema: listSchema('GET') }, list);
  app.post('/api/request-logs/list/', { schema: listSchema('POST') }, list);
  app.get('/api/request-logs/', { schema: listSchema('GET') }, list);
  app.post(
    '/api/request-logs/',
    {
      ...createConfig,
      schema: {
        ...listSchema('POST'),
        summary: 'List logs (a body of only filters, or none) or record one log (any other body)',
        body: validatedByHandler(z.union([ListBody, LogInput])),
        response: { ...listSchema('POST').response, 201: Created, 500: ErrorEnvelope },
      },
    },
    (request, reply) => {
      // The route's scope is read or ingest (route-scopes.ts): which one, its body says.
      const listing = isListBody(request.body);
      requireScope(request.auth, listing ? 'read' : 'ingest');
      return listing ? list(request, reply) : create(request, reply);
    },
  );
  const ingestTags = ['Logging API'];
  app.post(
    '/api/request-logs/create/',
    {
      ...createConfig,
      schema: {
        tags: ingestTags,
        summary: 'Record one log; answered once it is committed',
        body: CreateLogBody,
        response: { 201: Created, ...errors(...BODY_ERRORS, 500) },
      },
    },
    create,
  );
  app.post(
    '/api/request-logs/batch/',
    {
      ...batchConfig,
      schema: {
        tags: ingestTags,
        summary: `Record up to ${MAX_BATCH} logs, all or nothing; answered once they are committed`,
        body: BatchBody,
        response: {
          201: z.object({ ingested_count: z.number().int(), unique_ids: z.array(z.string()) }),
          ...errors(...BODY_ERRORS, 500),
        },
      },
    },
    async (request, reply) => {
      const uniqueIds = await ingestBatch(deps, request.auth, request.body);
      return reply.status(201).send({ ingested_count: uniqueIds.length, unique_ids: uniqueIds });
    },
  );

  const typed = app.withTypeProvider<ZodTypeProvider>();
  const one = { tags: ['Logs'], params: UniqueIdParams };
  typed.get(
    '/api/request-logs/:unique_id/',
    {
      schema: {
        ...one,
        summary: 'Read a log, whole',
        response: { 200: LogItem, ...errors(...AUTHENTICATED_ERRORS, 404) },
      },
    },
    (request) => getLogItem(deps, request.auth, request.params.unique_id),
  );
  typed.patch(
    '/api/request-logs/:unique_id/',
    {
      schema: {
        ...one,
        summary: "Replace a log's metadata or set its custom_identifier; answers the log",
        body: PatchLogBody,
        response: { 200: LogItem, ...errors(...BODY_ERRORS, 404) },
      },
    },
    (request) => patchLog(deps, request.auth, request.params.unique_id, request.body),
  );
  typed.delete(
    '/api/request-logs/:unique_id/',
    {
      schema: { ...one, summary: 'Delete a log', response: { 204: z.null(), ...errors(...BODY_ERRORS, 404) } },
    },
    async (request, reply) => {
      await removeLog(deps, request.auth, request.params.unique_id);
      return reply.status(204).send(null);
    },
  );
}
