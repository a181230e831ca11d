/**
 * OTLP/HTTP trace ingestion (docs/api.md "OpenTelemetry"): `POST /api/v1/traces` and `/v1/traces`, the
 * body protobuf or JSON, gzip or not. Each span becomes a log through the logging API's own checks and
 * writer (answered once committed); a span already stored — same trace and span id in the organization —
 * is not stored again, so an exporter's retry is safe. Spans that cannot be read, or are past what an
 * export may hold (otel/otlp-bounds.ts), are counted in `partialSuccess`; the others are stored.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AuthContext } from '../../auth/authenticator.js';
import type { AppDeps } from '../../deps.js';
import { AppError, envelope } from '../../errors.js';
import { buildLoggedLog, MAX_BATCH } from '../../logs/service.js';
import type { NewLog } from '../../logs/write/new-log.js';
import { OtlpBodyError } from '../../otel/otlp-body-error.js';
import { type OtlpSpan, readExport } from '../../otel/otlp-decode.js';
import { otlpTypes } from '../../otel/otlp-proto.js';
import type { SpanRejections } from '../../otel/span-rejections.js';
import { logInputOf } from '../../otel/span-to-log.js';
import { nameUnnamedSpans, storedRootNames, storedSpanKeys, tracesWithUnnamedSpans } from '../../otel/span-store.js';
import { chunks } from '../../util/chunks.js';
import { TimeSlice } from '../../util/time-slice.js';
import { ErrorEnvelope, errors } from '../plumbing/schemas.js';

export const OTLP_PATHS = ['/api/v1/traces', '/v1/traces'] as const;
/** The largest body, sent or after gzip. */
const MAX_OTLP_BYTES = 20 * 1024 * 1024;
/** google.rpc.Code INVALID_ARGUMENT, what OTLP's 400 answers carry. */
const INVALID_ARGUMENT = 3;

const gunzip = promisify(zlib.gunzip);

type Format = 'protobuf' | 'json';

const ExportResponseJson = z.object({
  partialSuccess: z
    .object({
      rejectedSpans: z.string().describe('Spans not stored (an int64, as OTLP/JSON writes them)'),
      errorMessage: z.string(),
    })
    .optional(),
});
const OtlpError = ErrorEnvelope.extend({
  code: z.number().int().describe('google.rpc.Code (3: INVALID_ARGUMENT)'),
  message: z.string(),
});

/** Spans of one organization being written now on this node: a retry arriving meanwhile is a duplicate too. */
const inFlight = new Set<string>();

export async function registerOtelRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      ['application/x-protobuf', 'application/protobuf', 'application/json'],
      { parseAs: 'buffer', bodyLimit: MAX_OTLP_BYTES },
      (_request, body, done) => done(null, body),
    );
    const schema = (path: string) => ({
      tags: ['OpenTelemetry'],
      summary:
        'Store OpenTelemetry spans (OTLP/HTTP, protobuf or JSON, gzip or not) as logs' +
        (path === '/v1/traces' ? ' — the same as /api/v1/traces' : ''),
      response: {
        200: z.union([ExportResponseJson, z.string().describe('ExportTraceServiceResponse, protobuf')]),
        400: z.union([OtlpError, z.string().describe('google.rpc.Status, protobuf')]),
        ...errors(401, 413, 415, 500, 503),
      },
    });
    for (const path of OTLP_PATHS) {
      scope.post(path, { schema: schema(path) }, (request, reply) => exportTraces(deps, request, reply));
    }
  });
}

function formatOf(request: FastifyRequest): Format {
  return String(request.headers['content-type'] ?? '').startsWith('application/json') ? 'json' : 'protobuf';
}

async function exportTraces(deps: AppDeps, request: FastifyRequest, reply: FastifyReply) {
  const format = formatOf(request);
  let spans: OtlpSpan[];
  let rejected: SpanRejections;
  try {
    ({ spans, rejected } = await readExport(await bodyOf(request), format));
  } catch (err) {
    if (err instanceof OtlpBodyError) return refuse(reply, format, err.message);
    throw err;
  }
  const { logs, keys } = await newLogs(deps, request.auth, spans, rejected);
  try {
    await Promise.all(chunks(logs, MAX_BATCH).map((chunk) => deps.writer.write(chunk)));
  } finally {
    for (const key of keys) inFlight.delete(key);
  }
  await nameSpansOfRoots(deps, request.auth.organizationId, spans, logs);
  return answer(reply, format, rejected);
}

async function bodyOf(request: FastifyRequest): Promise<Buffer> {
  const raw = request.body;
  if (!Buffer.isBuffer(raw)) throw new OtlpBodyError('the body is empty');
  const encoding = String(request.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return raw;
  if (encoding !== 'gzip') {
    throw new AppError(
      415,
      'unsupported_encoding',
      `Content-Encoding '${encoding}' is not supported; send gzip or none.`,
    );
  }
  try {
    return await gunzip(raw, { maxOutputLength: MAX_OTLP_BYTES });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new AppError(413, 'body_too_large', `The body is more than ${MAX_OTLP_BYTES} bytes once decompressed.`);
    }
    throw new OtlpBodyError(`the body is not gzip: ${(err as Error).message}`);
  }
}

/**
 * The logs of the spans not stored yet: each checked as the logging API checks a log (one that fails is
 * rejected, with why), those already stored or being stored left out.
 */
async function newLogs(
  deps: AppDeps,
  auth: AuthContext,
  spans: OtlpSpan[],
  rejected: SpanRejections,
): Promise<{ logs: NewLog[]; keys: string[] }> {
  const workflows = await workflowNames(deps, auth.organizationId, spans);
  const seen = new Set<string>();
  const fresh: { span: OtlpSpan; key: string }[] = [];
  for (const span of spans) {
    const key = `${auth.organizationId}\n${span.traceId}\n${span.spanId}`;
    if (seen.has(key) || inFlight.has(key)) continue;
    seen.add(key);
    fresh.push({ span, key });
  }
  const stored = await storedSpanKeys(
    deps.db.db,
    auth.organizationId,
    fresh.map((f) => f.span),
  );
  const logs: NewLog[] = [];
  const keys: string[] = [];
  const slice = new TimeSlice();
  for (const { span, key } of fresh) {
    await slice.pause();
    if (stored.has(`${span.traceId}\n${span.spanId}`) || inFlight.has(key)) continue;
    try {
      logs.push(
        buildLoggedLog(
          deps,
          auth,
          logInputOf(span, (trace) => workflows.get(trace)),
          `span ${span.spanId}`,
        ),
      );
      inFlight.add(key);
      keys.push(key);
    } catch (err) {
      if (err instanceof AppError) {
        rejected.add(err.message);
        continue;
      }
      // A fault of gatelog's: the spans marked as being written are not, so a retry must find them free.
      for (const k of keys) inFlight.delete(k);
      throw err;
    }
  }
  return { logs, keys };
}

/**
 * Each trace's workflow name when its spans do not say it: the name of its root span, in this export or
 * stored by an earlier one.
 */
async function workflowNames(deps: AppDeps, organizationId: string, spans: OtlpSpan[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const span of spans) if (span.parentSpanId === null && span.name) names.set(span.traceId, span.name);
  const unknown = [...new Set(spans.map((s) => s.traceId))].filter((t) => !names.has(t));
  for (const [traceId, name] of await storedRootNames(deps.db.db, organizationId, unknown)) names.set(traceId, name);
  return names;
}

/**
 * The spans of a trace stored without a workflow name take its root's name once both are stored. A root
 * span comes last (it ends last, and exporters send spans as they end): the spans stored before it take
 * its name when it arrives. And exports of one trace may be read at the same time: a span written while
 * its root was being written (neither saw the other before) looks for the root again once it is stored —
 * one of the two looks comes after both writes, so no span is left unnamed.
 */
async function nameSpansOfRoots(
  deps: AppDeps,
  organizationId: string,
  spans: OtlpSpan[],
  written: NewLog[],
): Promise<void> {
  const roots = new Map<string, string>();
  for (const span of spans) if (span.parentSpanId === null && span.name) roots.set(span.traceId, span.name);
  const waiting = written.filter(({ row }) => row.span_workflow_name === null && row.trace_unique_id !== null);
  if (waiting.length > 0) {
    const traces = new Set(waiting.map(({ row }) => row.trace_unique_id as string));
    const stored = await workflowNames(
      deps,
      organizationId,
      spans.filter((s) => traces.has(s.traceId) && !roots.has(s.traceId)),
    );
    for (const [traceId, name] of stored) roots.set(traceId, name);
  }
  // Most roots come with their whole trace (or are a trace alone): one look finds the few that do not.
  for (const traceId of await tracesWithUnnamedSpans(deps.db.db, organizationId, [...roots.keys()])) {
    await nameUnnamedSpans(deps.db.db, organizationId, traceId, roots.get(traceId)!);
  }
}

function answer(reply: FastifyReply, format: Format, rejected: SpanRejections) {
  const partialSuccess =
    rejected.count === 0 ? undefined : { rejectedSpans: String(rejected.count), errorMessage: rejected.message() };
  if (format === 'json') return reply.status(200).send(partialSuccess ? { partialSuccess } : {});
  const { response } = otlpTypes();
  const bytes = response.encode(response.fromObject(partialSuccess ? { partialSuccess } : {})).finish();
  return reply.status(200).header('content-type', 'application/x-protobuf').send(Buffer.from(bytes));
}

/** A body that is not an OTLP request: 400 with google.rpc.Status, in the request's own form. */
function refuse(reply: FastifyReply, format: Format, reason: string) {
  const message = `The body is not an OTLP trace export: ${reason}.`;
  if (format === 'json') {
    return reply.status(400).send({
      code: INVALID_ARGUMENT,
      message,
      ...envelope(400, 'invalid_otlp', message, 'body'),
    });
  }
  const { status } = otlpTypes();
  const bytes = status.encode(status.fromObject({ code: INVALID_ARGUMENT, message })).finish();
  return reply.status(400).header('content-type', 'application/x-protobuf').send(Buffer.from(bytes));
}
