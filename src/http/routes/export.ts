/**
 * GET|POST /api/request-logs/export/: every log a list would match — not a page — streamed as JSON Lines
 * or CSV (docs/api.md "Exporting logs"). The logs are read newest first by timestamp in chunks, each
 * chunk the next logs after the last one read (by timestamp, then id), each within the query budget; the
 * answer is written as it is read, so an export of any size holds one chunk in memory.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { withQueryBudget } from '../../db/query-budget.js';
import { AppError } from '../../errors.js';
import { LOG_FIELDS, type FieldRegistry } from '../../filters/registry.js';
import { filterBodySchema } from '../../filters/schema.js';
import type { FilterNode } from '../../filters/types.js';
import { allMatchingLogs } from '../../logs/list/list.js';
import type { LogScope } from '../../logs/list/scope.js';
import { INDEXED_TEXT_BYTES } from '../../logs/indexed-text.js';
import { METADATA_COLUMN, pickFields } from '../../logs/present.js';
import { csvLine } from '../../util/csv.js';
import { inPieces } from '../../util/text-pieces.js';
import { listFilter } from '../plumbing/list-filters.js';
import { itemFieldsParser, LOG_SCOPE_QUERY, logScopeOf } from '../plumbing/log-scope-params.js';
import { AUTHENTICATED_ERRORS, BODY_ERRORS, errors, queryParam } from '../plumbing/schemas.js';
import { type Query, single } from '../plumbing/query-params.js';

/** Logs read per query: small enough that a chunk of large previews stays a few MB. */
export const EXPORT_CHUNK = 500;

/** The CSV columns when `fields` is not given. */
export const DEFAULT_CSV_FIELDS = [
  'unique_id',
  'timestamp',
  'log_type',
  'status_code',
  'error_message',
  'error_code',
  'model',
  'customer_identifier',
  'prompt_tokens',
  'completion_tokens',
  'cost',
  'latency',
  'time_to_first_token',
  'environment',
  'input',
  'output',
  'metadata',
] as const;

/** The export's own parameters are not URL quick filters. */
export const EXPORT_FIELDS: FieldRegistry = {
  ...LOG_FIELDS,
  reservedParams: new Set([...LOG_FIELDS.reservedParams, 'format', 'fields']),
};

function parseFormat(query: Query): 'jsonl' | 'csv' {
  const raw = single(query, 'format') ?? 'jsonl';
  if (raw !== 'jsonl' && raw !== 'csv') {
    throw new AppError(400, 'invalid_parameter', "format: 'jsonl' or 'csv'.", 'format');
  }
  return raw;
}

/** `metadata__<key>`: a column of one metadata key's value (the key's text as the filter language names it). */
const isMetadataColumn = (field: string) =>
  field.startsWith(METADATA_COLUMN) &&
  field.length > METADATA_COLUMN.length &&
  Buffer.byteLength(field.slice(METADATA_COLUMN.length), 'utf8') <= INDEXED_TEXT_BYTES.metadataKey;

/**
 * Item fields, each at most once: a CSV line writes every field named, so a repeated one would make a short
 * URL ask for an answer (and lines) of any size. At most every known field, then.
 */
function parseFields(query: Query): string[] | null {
  const fields = itemFieldsParser('fields', isMetadataColumn)(query);
  const seen = new Set<string>();
  for (const f of fields ?? []) {
    if (seen.has(f)) throw new AppError(400, 'invalid_parameter', `fields: '${f}' is named more than once.`, 'fields');
    seen.add(f);
  }
  return fields;
}

export const ExportQuery = z.looseObject({
  format: queryParam(
    'format',
    parseFormat,
    'jsonl (default): one log per line, as list items; csv: a header line, then a line per log',
  ),
  fields: queryParam(
    'fields',
    parseFields,
    'Comma-separated item fields, and metadata__<key> for one metadata key, each once (default: every field for jsonl; a common set for csv)',
  ),
  ...LOG_SCOPE_QUERY,
});
export type ExportQuery = z.output<typeof ExportQuery>;

/** What an export answers: its logs (scope and filter) and how they are written. */
export interface ExportPlan {
  scope: LogScope;
  filter: FilterNode | null;
  format: 'jsonl' | 'csv';
  /** null: every field (JSON Lines). */
  fields: readonly string[] | null;
}

/** The plan of an export request: everything it could be wrong about is checked here, before any byte. */
export function exportPlanOf(scope: LogScope, query: ExportQuery, filter: FilterNode | null): ExportPlan {
  const format = query.format;
  return { scope, filter, format, fields: query.fields ?? (format === 'csv' ? [...DEFAULT_CSV_FIELDS] : null) };
}

/** Streams an export as the answer (the header-authenticated routes and export tokens alike). */
export function sendExport(reply: FastifyReply, deps: AppDeps, plan: ExportPlan): FastifyReply {
  const { scope, filter, format, fields } = plan;
  const read = <T>(work: () => Promise<T>) => withQueryBudget(reply, deps.config.queryTimeoutMs, work);
  const chunks = allMatchingLogs(deps.db.reader, deps.db.dialect, scope, filter, EXPORT_CHUNK, read);
  // Line by line, joined into bounded pieces: a chunk's text is never built whole (its lines may be
  // large), and the next piece is made only once the client has taken the last (backpressure).
  async function* lines() {
    if (format === 'csv') yield csvLine(fields!);
    for await (const items of chunks) {
      // Each log let go once written (the array is the generator's too): what is held is what is
      // left to send, and the last chunk is not kept alive while the next one is read.
      for (let item = items.shift(); item !== undefined; item = items.shift()) {
        const picked: Record<string, unknown> = fields ? pickFields(item, fields) : item;
        yield format === 'csv' ? csvLine(fields!.map((f) => picked[f])) : `${JSON.stringify(picked)}\n`;
      }
    }
  }
  const name = `gatelog-logs-${new Date(scope.start).toISOString().slice(0, 10)}.${format}`;
  return reply
    .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}"`)
    .header('cache-control', 'no-store')
    .send(Readable.from(inPieces(lines()), { highWaterMark: 1 }));
}

export function registerExportRoutes(app: FastifyInstance, deps: AppDeps): void {
  const exportLogs = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.query as ExportQuery;
    const plan = exportPlanOf(logScopeOf(request, query), query, listFilter(request, reply, EXPORT_FIELDS));
    return sendExport(reply, deps, plan);
  };

  const schema = (method: 'GET' | 'POST') => ({
    tags: ['Request logs'],
    summary: 'Every matching log (not a page), streamed as JSON Lines or CSV',
    description:
      "The list's time range, scope and filters (URL quick filters; body filters on POST), newest first. " +
      'Large fields are previews, as in lists. A failure after the first line ends the stream unfinished.',
    querystring: ExportQuery,
    ...(method === 'POST' ? { body: filterBodySchema(LOG_FIELDS) } : {}),
    response: {
      200: z.string().describe('JSON Lines (application/x-ndjson) or CSV (text/csv)'),
      ...errors(...AUTHENTICATED_ERRORS, ...(method === 'POST' ? BODY_ERRORS : []), 503),
    },
  });
  app.get('/api/request-logs/export/', { schema: schema('GET') }, exportLogs);
  app.post('/api/request-logs/export/', { schema: schema('POST') }, exportLogs);
}
