/**
 * The one handler that turns every failure into the envelope of docs/api.md "Errors", plus the 404/405 answer
 * for requests that match no route.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { clientGone } from '../../db/query-budget.js';
import { isBusy } from '../../db/sqlite-dialect.js';
import { unavailableReason } from '../../db/unavailable.js';
import { AppError, envelope } from '../../errors.js';
import type { DatabaseErrorKind, Metrics } from '../../metrics.js';
import { notProxiedAnswer, wrongBaseUrlAnswer } from '../not-proxied.js';
import { setRequestIdHeaders } from './request-id.js';
import { zodToAppError } from '../../util/validation.js';

/** Fastify's own client errors (bad JSON, wrong content type, body too large) keep their status. */
/** The 5xx answers that come from the database, by the kind /metrics counts them under. */
const DATABASE_ERROR_KINDS: ReadonlyMap<string, DatabaseErrorKind> = new Map([
  ['database_busy', 'busy'],
  ['log_store_unavailable', 'unavailable'],
  ['database_unavailable', 'unavailable'],
  ['database_disk_full', 'unavailable'],
  ['query_timeout', 'query_timeout'],
  ['log_refused', 'other'],
]);

/** An error raised by either database driver (a refused statement, a lost connection). */
function isDatabaseError(err: unknown): boolean {
  const e = err as { name?: string; severity?: unknown; code?: unknown };
  return (
    e?.name === 'SqliteError' ||
    e?.name === 'DatabaseError' ||
    (typeof e?.severity === 'string' && typeof e?.code === 'string')
  );
}

function fromFastifyError(err: FastifyError): AppError | null {
  const status = err.statusCode ?? 500;
  if (status < 400 || status >= 500) return null;
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new AppError(413, 'payload_too_large', 'The request body is larger than this endpoint accepts.');
  }
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new AppError(
      415,
      'unsupported_media_type',
      `${err.message}; send the body as JSON with "Content-Type: application/json".`,
    );
  }
  if (
    err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    err instanceof SyntaxError
  ) {
    return new AppError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  return new AppError(status, 'invalid_request', err.message);
}

/** The database cannot be used for now (see db/unavailable.ts): a 503 the caller can retry, not a 500. */
function databaseUnavailable(err: unknown): AppError | null {
  const reason = unavailableReason(err);
  if (reason === 'disk_full') {
    const message = "The database's disk is full; nothing was changed. Retry once space is freed.";
    return new AppError(503, 'database_disk_full', message, null, { 'retry-after': '5' }, err);
  }
  if (reason === 'unreachable') {
    const message = 'The database cannot be reached right now; nothing was changed. Retry shortly.';
    return new AppError(503, 'database_unavailable', message, null, { 'retry-after': '1' }, err);
  }
  return null;
}

export function registerErrorHandling(app: FastifyInstance, metrics: Metrics, publicUrl: string | null): void {
  app.setErrorHandler((err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    let appError: AppError | null = null;
    if (err instanceof AppError) appError = err;
    else if (err instanceof ZodError) appError = zodToAppError(err);
    else if (isBusy(err)) {
      appError = new AppError(503, 'database_busy', 'The database is busy; retry shortly.', null, {
        'retry-after': '1',
      });
    }
    // A body its client stopped sending (the connection closed midway) is the client's doing; its
    // ECONNRESET must not read as a database that cannot be reached.
    if (appError === null && request.raw.readableAborted) appError = clientGone();
    if (appError === null) appError = databaseUnavailable(err);
    if (appError === null) appError = fromFastifyError(err as FastifyError);

    if (appError === null) {
      if (isDatabaseError(err)) metrics.databaseError('other');
      request.log.error({ err }, 'unhandled error');
      return reply.status(500).send(envelope(500, 'server_error', 'An internal error occurred.'));
    }
    if (appError.code === 'client_closed_request') {
      // Nobody reads the answer; the connection (possibly half-closed by the client) is ended now.
      request.log.info('client closed the request before it was answered');
      // No answer is sent, so no onResponse hook runs: counted here, under nginx's 499.
      metrics.request(request.method, request.routeOptions.url ?? '(unmatched)', 499);
      request.raw.socket?.destroy();
      return reply;
    }
    const databaseKind = DATABASE_ERROR_KINDS.get(appError.code);
    if (databaseKind) metrics.databaseError(databaseKind);
    if (appError.status >= 500) request.log.error({ err }, appError.message);
    else request.log.warn({ code: appError.code, param: appError.param }, appError.message);
    return reply.status(appError.status).headers(appError.headers).send(appError.toEnvelope());
  });

  // Route patterns by method, so an unmatched request can tell "no such path" (404) from "no such
  // method on this path" (405).
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  // The proxied model routes by their documented path ("POST /api/embeddings"), named by the 404 of a
  // model route gatelog does not proxy.
  const proxied: string[] = [];
  app.addHook('onRoute', (route) => {
    const documented = route.config?.proxiedPath;
    if (documented !== undefined) {
      for (const m of Array.isArray(route.method) ? route.method : [route.method]) {
        // A GET route's HEAD goes without saying; a path parameter reads as the docs write it ({id}).
        if (m === 'HEAD') continue;
        const name = `${m} ${documented.replace(/:([^/]+)/g, '{$1}')}`;
        if (!proxied.includes(name)) proxied.push(name);
      }
    }
    const source = route.url
      .replace(/\/+$/, '')
      .replace(/:[^/]+/g, '[^/]+')
      .replace(/\*/g, '.*');
    const pattern = new RegExp(`^${source}/?$`);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let entry = routes.find((r) => r.pattern.source === pattern.source);
    if (!entry) {
      entry = { pattern, methods: new Set() };
      routes.push(entry);
    }
    for (const m of methods) entry.methods.add(m);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m);
    if (allowed.size > 0) {
      const allow = [...allowed].sort().join(', ');
      return reply
        .status(405)
        .header('allow', allow)
        .send(envelope(405, 'method_not_allowed', `Method ${request.method} is not allowed here; allowed: ${allow}.`));
    }
    const wrongBase = wrongBaseUrlAnswer(
      request.method,
      path,
      proxied,
      publicUrl ?? `${request.protocol}://${request.host}`,
    );
    if (wrongBase) return reply.status(404).send(wrongBase);
    const notProxied = notProxiedAnswer(request.method, path, proxied);
    if (notProxied) return reply.status(404).send(notProxied);
    return reply.status(404).send(envelope(404, 'not_found', `No route for ${request.method} ${path}.`));
  });
}

/**
 * Fastify's answers for a URL it cannot decode and for a path parameter longer than the router takes
 * (no id of gatelog's is that long, so: not found), in the envelope. Passed to Fastify's constructor.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // Routing failed, so no hook ran: the request ids are set here.
  setRequestIdHeaders(request, reply);
  request.log.info({ url: request.raw.url, code: err.code }, 'request refused before routing');
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.status(404).send(envelope(404, 'not_found', 'Not found: a path parameter is longer than any id.'));
    return;
  }
  reply.status(400).send(envelope(400, 'invalid_url', 'The URL is not valid (bad percent-encoding).'));
}

/**
 * What Node's HTTP parser refuses before any route sees the request (headers over the size limit, a
 * request that took too long to arrive, malformed HTTP), answered in the envelope on the raw socket.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let code = 'bad_request';
  let message = 'The request is not valid HTTP.';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    [status, code, message] = [408, 'request_timeout', 'The request took too long to arrive.'];
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    [status, code, message] = [431, 'headers_too_large', 'The request headers are larger than 16 KB.'];
  }
  // Only when nothing was answered yet: a request that timed out after its 401 just loses its connection.
  if (socket.writable && socket.bytesWritten === 0) {
    const body = JSON.stringify(envelope(status, code, message));
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
