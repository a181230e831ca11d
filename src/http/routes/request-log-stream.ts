/**
 * GET /api/request-logs/stream/ — the live tail (docs/api.md "Live tail"): Server-Sent Events of the new
 * logs that match the list's URL filters and scope, each as the list would show it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import type { LogScope } from '../../logs/list/scope.js';
import type { TailHub } from '../../logs/tail/hub.js';
import { filterOf } from '../plumbing/list-filters.js';
import { LOG_SCOPE_QUERY } from '../plumbing/log-scope-params.js';
import { parseTimeParam, type Query, single } from '../plumbing/query-params.js';
import { AUTHENTICATED_ERRORS, errors, queryParam } from '../plumbing/schemas.js';

/** The query parameter that stands for the Last-Event-ID header (a client that cannot set headers). */
const LAST_EVENT_ID_PARAM = 'last_event_id';

const parseEventId = (raw: string | undefined, name: string): number | null => {
  if (raw === undefined || raw.trim() === '') return null;
  const value = raw.trim();
  if (!/^\d{1,15}$/.test(value)) {
    throw new AppError(
      400,
      'invalid_parameter',
      `${name}: expected the id of an event this stream sent (a non-negative integer), got '${value.slice(0, 40)}'.`,
      name,
    );
  }
  return Number(value);
};

const StreamQuery = z.looseObject({
  ...LOG_SCOPE_QUERY,
  start_time: queryParam(
    'start_time',
    (q: Query) => parseTimeParam(q, 'start_time'),
    'Only logs at or after this time (ISO 8601, no offset means UTC); default: no bound',
  ),
  end_time: queryParam(
    'end_time',
    (q: Query) => parseTimeParam(q, 'end_time'),
    'Only logs at or before this time; default: no bound',
  ),
  [LAST_EVENT_ID_PARAM]: queryParam(
    LAST_EVENT_ID_PARAM,
    (q: Query) => parseEventId(single(q, LAST_EVENT_ID_PARAM), LAST_EVENT_ID_PARAM),
    'The same as the Last-Event-ID header (which wins): first send the logs after this event id',
  ),
});
type StreamQuery = z.output<typeof StreamQuery>;

const DESCRIPTION =
  'text/event-stream. Each new log that matches arrives as `id: <event id>`, `event: log`, `data: <list item ' +
  'JSON>`, in id order, within a second of its write. Every other query parameter is a URL quick filter, as on ' +
  'GET /api/request-logs/list/ (is_test, all_envs and environment scope it the same way). Last-Event-ID (or ' +
  `${LAST_EVENT_ID_PARAM}) resumes after that event: the newest 1000 logs missed are sent first. A comment ` +
  'keeps the connection open every 15 s. The stream ends with `event: end` (data {"reason": "shutdown" | ' +
  '"key_revoked"}) or is cut when its reader falls too far behind. At most GATELOG_TAIL_MAX_CLIENTS tails per ' +
  'node; beyond, 429.';

/** The list's environment scope, without its default time range: a tail has no end. */
function tailScope(organizationId: string, query: StreamQuery): LogScope {
  const start = query.start_time ?? 0;
  const end = query.end_time ?? Number.MAX_SAFE_INTEGER;
  if (start > end) throw new AppError(400, 'invalid_parameter', 'start_time must not be after end_time.', 'start_time');
  const isTest = query.is_test !== undefined ? query.is_test : query.all_envs ? null : false;
  return { organizationId, start, end, isTest };
}

export function registerRequestLogStreamRoute(app: FastifyInstance, hub: TailHub): void {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const eventStream = (r: FastifyReply) =>
      r
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-transform')
        .header('x-accel-buffering', 'no');
    // HEAD (every GET route answers it) says what a GET would answer, without opening a tail.
    if (request.method === 'HEAD') return eventStream(reply).send('');
    const query = request.query as StreamQuery;
    const header = request.headers['last-event-id'];
    const fromHeader = parseEventId(typeof header === 'string' ? header : undefined, 'Last-Event-ID');
    const search = new URL(request.url, 'http://localhost').searchParams;
    search.delete(LAST_EVENT_ID_PARAM);
    const filter = filterOf(search, undefined, LOG_FIELDS, reply);
    const client = await hub.open({
      scope: tailScope(request.auth.organizationId, query),
      filter,
      credential: request.headers.authorization ?? '',
      afterId: fromHeader ?? query[LAST_EVENT_ID_PARAM] ?? null,
    });
    // The client went away: its tail ends (and frees its slot) at once.
    reply.raw.once('close', () => client.stream.destroy());
    // The headers go out at once, not with the first log (which may be minutes away).
    reply.raw.once('pipe', () => reply.raw.flushHeaders());
    return eventStream(reply).send(client.stream);
  };
  app.get(
    '/api/request-logs/stream/',
    {
      schema: {
        tags: ['Logs'],
        summary: 'Live tail: new logs matching the URL filters, as Server-Sent Events (docs/api.md "Live tail")',
        description: DESCRIPTION,
        produces: ['text/event-stream'],
        querystring: StreamQuery,
        headers: z.looseObject({
          'last-event-id': z.string().optional().describe('Resume after this event id (the id: line of an event)'),
        }),
        response: {
          200: z.string().describe('text/event-stream: events `log` and `end`, comment lines'),
          ...errors(...AUTHENTICATED_ERRORS, 429),
        },
      },
    },
    handler,
  );
}
