/**
 * Export links (docs/api.md "Exporting logs"): a browser saves a large export to disk only when it
 * follows a link itself, and a link cannot carry an Authorization header — so the export is asked for
 * with the key, as a token, and then fetched by a plain GET with the token in its query string.
 *   POST /api/request-logs/export/tokens/  (the key): the export's parameters, as the export takes them;
 *                                            answers { token, url, expires_at }.
 *   GET  /api/request-logs/export/download/?token=…  (no key): the export, once, within 60 s.
 * The token is stored (hashed) in the database, so any node takes it; the key it was made with must still
 * be valid when it is used.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { claimExportToken, createExportToken, exportTokenUsable } from '../../exports/token-repository.js';
import { LOG_FIELDS } from '../../filters/registry.js';
import { filterBodySchema } from '../../filters/schema.js';
import { zodToAppError } from '../../util/validation.js';
import { EXPORT_FIELDS, ExportQuery, exportPlanOf, sendExport } from './export.js';
import { filterOf, listFilter } from '../plumbing/list-filters.js';
import { logScopeOf, organizationScopeOf } from '../plumbing/log-scope-params.js';
import { BODY_ERRORS, errors, Timestamp } from '../plumbing/schemas.js';

export const EXPORT_DOWNLOAD_PATH = '/api/request-logs/export/download/';

const ExportToken = z.object({
  token: z.string().describe('Single use, valid for 60 seconds'),
  url: z.string().describe('The absolute URL of the download: a plain GET, no Authorization header'),
  expires_at: Timestamp,
});

/** One answer for a token that is unknown, used, expired or whose key was revoked: nothing to tell apart. */
const invalidToken = () =>
  new AppError(
    401,
    'invalid_export_token',
    'This export link is unknown, used or expired (a link works once, for 60 seconds); ask for a new one.',
    'token',
  );

/** POST /api/request-logs/export/tokens/, in the authenticated scope. */
export function registerExportTokenRoute(scope: FastifyInstance, deps: AppDeps): void {
  scope.post(
    '/api/request-logs/export/tokens/',
    {
      schema: {
        tags: ['Request logs'],
        summary: 'A single-use link to an export, for a browser to download without the key',
        description:
          'Takes what POST /api/request-logs/export/ takes (query parameters and body filters) and checks it ' +
          'the same way; the link answers that export once, within 60 seconds, to a GET without a key.',
        querystring: ExportQuery,
        body: filterBodySchema(LOG_FIELDS),
        response: { 201: ExportToken, ...errors(...BODY_ERRORS) },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const query = request.query as ExportQuery;
      // Checked now, so that a bad export is refused here rather than when the browser follows the link.
      const scope = logScopeOf(request, query);
      listFilter(request, reply, EXPORT_FIELDS);
      // The time range as resolved now: a default end (now) must not move by the time the link is used.
      const search = new URL(request.url, 'http://localhost').searchParams;
      search.set('start_time', new Date(scope.start).toISOString());
      search.set('end_time', new Date(scope.end).toISOString());
      const filters = (request.body as { filters?: unknown } | undefined)?.filters;
      const { token, expiresAt } = await createExportToken(deps.db.db, {
        organizationId: request.auth.organizationId,
        keyId: request.auth.keyId,
        query: search.toString(),
        filters: filters === undefined ? null : JSON.stringify(filters),
      });
      const base = deps.config.publicUrl ?? `${request.protocol}://${request.host}`;
      return reply.status(201).send({
        token,
        url: `${base}${EXPORT_DOWNLOAD_PATH}?token=${token}`,
        expires_at: new Date(expiresAt).toISOString(),
      });
    },
  );
}

/** A query string as Fastify parses one: a repeated parameter becomes an array. */
function queryObject(search: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of search) {
    const seen = query[name];
    query[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return query;
}

/** GET /api/request-logs/export/download/: outside the authenticated scope, the token is its credential. */
export function registerExportDownloadRoute(app: FastifyInstance, deps: AppDeps): void {
  app.get(
    EXPORT_DOWNLOAD_PATH,
    {
      schema: {
        tags: ['Request logs'],
        summary: 'The export an export link stands for, once (no key: the token is the credential)',
        description:
          'Answers as GET /api/request-logs/export/ does (Content-Disposition: attachment), for the ' +
          'organization, parameters and filters the token was made with. HEAD says whether the link works ' +
          'without using it.',
        security: [],
        querystring: z.object({
          token: z.string().min(1).max(200).describe('From POST /api/request-logs/export/tokens/'),
        }),
        response: {
          200: z.string().describe('JSON Lines (application/x-ndjson) or CSV (text/csv)'),
          ...errors(400, 401, 503),
        },
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const { token } = request.query as { token: string };
      if (request.method === 'HEAD') {
        if (!(await exportTokenUsable(deps.db.db, token))) throw invalidToken();
        return reply.header('cache-control', 'no-store').send('');
      }
      const claimed = await claimExportToken(deps.db.db, token);
      if (!claimed) throw invalidToken();
      const search = new URLSearchParams(claimed.query);
      const parsed = ExportQuery.safeParse(queryObject(search));
      if (!parsed.success) throw zodToAppError(parsed.error);
      const body = claimed.filters === null ? {} : { filters: JSON.parse(claimed.filters) as unknown };
      const scope = organizationScopeOf(claimed.organizationId, parsed.data);
      const plan = exportPlanOf(scope, parsed.data, filterOf(search, body, EXPORT_FIELDS, reply));
      return sendExport(reply, deps, plan);
    },
  );
}
