/**
 * HTTP client for every provider (what differs between them, such as how a key is sent, comes with each
 * request: providers/protocol.ts): one keep-alive undici Pool per origin (origin-pools.ts), a deadline
 * per call (GATELOG_UPSTREAM_TIMEOUT_MS). An unreachable upstream is a 502 and a slow one a 504, both in
 * the envelope; an answer that is not JSON or an event stream (or a type the route names) is a 502 too;
 * any other answer the upstream gives is returned as it is.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import { AppError } from '../errors.js';
import type { AddressPolicy } from './address-policy.js';
import type { Authenticate } from './authentication.js';
import { OriginPools } from './origin-pools.js';

export interface UpstreamResponse {
  status: number;
  contentType: string;
  body: Buffer;
  /** The provider's x-request-id (Anthropic's request-id) header, when it sent one. */
  requestId: string | undefined;
  /** Seconds the provider asked to wait before a retry (its retry-after header), when it said. */
  retryAfter?: number;
}

export interface UpstreamRequest {
  /** Base URL of the provider API, e.g. https://api.openai.com/v1 */
  baseUrl: string;
  /** Path under the base URL, e.g. /embeddings */
  path: string;
  /**
   * How the call is authenticated: its kind's `authenticate` (providers/kind.ts), given the request
   * with every other header, whose headers are sent last; or fixed headers, sent first (a route's own
   * `headers` replace them).
   */
  auth: Readonly<Record<string, string>> | Authenticate;
  /** The route's own headers for the provider (a caller's `anthropic-version`). */
  headers?: Readonly<Record<string, string>>;
  /** POST unless said: a stored object is read (GET) or deleted (DELETE) without a body. */
  method?: 'POST' | 'GET' | 'DELETE';
  /** The body's type; absent with the body. */
  contentType?: string;
  /**
   * The whole body, or its chunks as they are produced (a multipart upload is streamed, not joined);
   * absent for a call without one (a GET).
   */
  body?: string | Buffer | Readable;
  /**
   * The marks of the gatelog installations the call came through (loop-guard.ts), passed on before this
   * installation's own.
   */
  via?: readonly string[];
  /** The body's length when it is streamed, sent as Content-Length (else the body is chunked). */
  contentLength?: number;
  /** What the answer may be; JSON unless said (a transcription's text formats are text/plain). */
  accept?: string;
  /**
   * Content types the answer may have besides JSON and an event stream (a transcription's text/plain);
   * any other is refused with a 502, never passed back (a base_url pointing at an internal page).
   */
  answerTypes?: readonly string[];
  /**
   * The base URL is one an organization registered: its connections go through the address policy
   * (GATELOG_UPSTREAM_PRIVATE_ADDRESSES). The operator's own upstreams are not checked.
   */
  checkAddress?: boolean;
  /**
   * The body is a stream still arriving from the caller (an upload passed on as it comes in): the wait
   * for the answer starts when the body ends, not when the call starts.
   */
  bodyStillArriving?: boolean;
}

/** Where a streamed answer's body goes, chunk by chunk, as it arrives. */
export interface StreamSink {
  data(chunk: Buffer): void;
  end(): void;
  /** The connection failed or was aborted before the body ended. */
  error(err: AppError): void;
}

/** A 2xx event stream, its headers read and its body not yet: attach a sink to receive it. */
export interface UpstreamStream {
  readonly kind: 'stream';
  status: number;
  contentType: string;
  requestId: string | undefined;
  /** Chunks that arrived before this call are given to the sink at once, in order. */
  attach(sink: StreamSink): void;
  /** Backpressure: no more chunks are read from the provider until resume(). */
  pause(): void;
  resume(): void;
  /** Ends the call now (the provider sees its connection closed). */
  abort(reason: AppError): void;
}

/** What an upstream call may answer when a stream was asked for: an event stream, or a whole answer. */
export type OpenedAnswer = UpstreamStream | { readonly kind: 'whole'; response: UpstreamResponse };

export interface UpstreamOptions {
  /** Per call: the longest wait for the answer's headers, and between two chunks of its body. */
  timeoutMs: number;
  /** The largest answer one call may hold; a larger one is refused with a 502 (it is never buffered whole). */
  maxResponseBytes?: number;
  /**
   * Sent with every call: the header that lists the installations a call passed through, and this
   * installation's mark, added after the request's `via` (how a gatelog recognizes its calls coming back).
   */
  loopMark?: { header: string; mark: string };
  /**
   * Connections per origin; null or absent: no limit. A streamed call holds its connection for as long
   * as the model writes, so a cap makes every call past it wait for a whole stream to end.
   */
  maxConnections?: number | null;
  /** Checks the addresses an organization's base URL connects to; absent: none is checked. */
  addressPolicy?: AddressPolicy;
  /** A pool with nothing in flight for this long is closed (default 60 s). */
  poolIdleMs?: number;
}

/** A retry-after header in seconds: a number of seconds, or an HTTP date. */
export function retryAfterSeconds(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** Base URLs whose origin and path are kept parsed; past it they are parsed again. */
const MAX_TARGETS = 1000;

/** JSON (application/json, application/problem+json…) and event streams: what a provider answers. */
const PROVIDER_TYPE = /^(application\/([\w.+-]+\+)?json|text\/event-stream)$/;

export class UpstreamClient {
  private readonly pools: OriginPools;
  private readonly targets = new Map<string, { origin: string; basePath: string }>();
  /** Calls in flight, so that a shutdown past its deadline can end them. */
  private readonly inFlight = new Set<Dispatcher.DispatchController>();
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly loopMark: { header: string; mark: string } | null;
  private readonly maxConnections: number | null;

  constructor(options: UpstreamOptions) {
    this.timeoutMs = options.timeoutMs;
    this.maxResponseBytes = options.maxResponseBytes ?? Number.MAX_SAFE_INTEGER;
    this.loopMark = options.loopMark ?? null;
    this.maxConnections = options.maxConnections ?? null;
    const policy = options.addressPolicy;
    this.pools = new OriginPools({
      idleMs: options.poolIdleMs ?? 60_000,
      create: (origin, checked) =>
        new Pool(origin, {
          connections: this.maxConnections,
          keepAliveTimeout: 30_000,
          ...(checked && policy !== undefined ? { connect: policy.connector() } : {}),
        }),
    });
  }

  private pool(origin: string, request: UpstreamRequest): Dispatcher {
    return this.pools.get(origin, request.checkAddress === true);
  }

  /** Connection pools open now, one per origin in use. */
  get openPools(): number {
    return this.pools.size;
  }

  /**
   * The 502 for an answer whose type gatelog does not pass on, or null. Checked on the headers, before
   * any of the body is read: an internal page is never held, logged or returned.
   */
  private refusedType(request: UpstreamRequest, status: number, headers: Record<string, unknown>): AppError | null {
    if (status < 200) return null;
    const raw = headers['content-type'];
    const type = raw === undefined ? '' : String(raw).split(';')[0].trim().toLowerCase();
    if (type === '') {
      // Nothing to pass on: a 204, or an empty body.
      if (status === 204 || status === 304 || String(headers['content-length']) === '0') return null;
    } else if (PROVIDER_TYPE.test(type) || request.answerTypes?.includes(type)) {
      return null;
    }
    // An error page keeps its status (a proxy's 429 or a wrong path's 404 means what it says, and a
    // 429 must not count against the provider's circuit) and its Retry-After; only its body is replaced.
    const retryAfter = status >= 400 ? retryAfterSeconds(headers['retry-after'] as string | undefined) : undefined;
    return new AppError(
      status >= 400 ? status : 502,
      'upstream_invalid_content_type',
      `The provider answered ${status} with ${type === '' ? 'no Content-Type' : `Content-Type ${type}`}, ` +
        'which is not JSON or an event stream; gatelog does not pass such an answer on.',
      null,
      retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
    );
  }

  /** Origin and path prefix of a base URL, parsed once per base URL. */
  private target(baseUrl: string): { origin: string; basePath: string } {
    let target = this.targets.get(baseUrl);
    if (!target) {
      const url = new URL(baseUrl);
      target = { origin: url.origin, basePath: url.pathname.replace(/\/+$/, '') };
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(baseUrl, target);
    }
    return target;
  }

  /**
   * One call (a POST unless the request says) through undici's dispatch API: the answer's chunks are
   * collected as they arrive, without the Readable stream (and the copy into one buffer) that
   * `request()` makes for every response.
   */
  async post(request: UpstreamRequest): Promise<UpstreamResponse> {
    const outgoing = await this.outgoing(request, 'application/json');
    return new Promise((resolve, reject) => {
      const answer = new AnswerReader(this.maxResponseBytes);
      const call = this.track();
      let answerTimer: NodeJS.Timeout | null = null;
      const done = () => {
        if (answerTimer !== null) clearTimeout(answerTimer);
        call.end();
      };
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: call.start,
        onResponseStart: (controller, statusCode, headers) => {
          this.readHead(request, answer, controller, statusCode, headers);
        },
        onResponseData: (controller, chunk) => this.readChunk(answer, controller, chunk),
        onResponseEnd: () => {
          done();
          resolve(answer.response());
        },
        onResponseError: (_controller, err) => {
          done();
          reject(this.answerFailure(answer, err));
        },
      };
      const arriving = request.bodyStillArriving === true;
      if (arriving) {
        // undici's headers timeout would count the caller's upload time: this one starts at the body's end.
        const answerDeadline = () => {
          answerTimer = setTimeout(() => {
            if (answer.status === 0) call.controller?.abort(this.timeout());
          }, this.timeoutMs);
        };
        const upload = request.body as Readable;
        // The upload may have ended while the call was being authenticated.
        if (upload.readableEnded) answerDeadline();
        else upload.once('end', answerDeadline);
      }
      // undici's own timers (one wheel for all calls) bound the wait for the answer and its body.
      const timeouts = { headersTimeout: arriving ? 0 : this.timeoutMs, bodyTimeout: this.timeoutMs };
      this.dispatch(outgoing, timeouts, handler, reject);
    });
  }

  /**
   * A call whose answer may be an event stream. A 2xx `text/event-stream` answer resolves as soon as its
   * headers arrive, its body handed to a sink with backpressure and no time limit of undici's (the
   * stream's idle time is its reader's to bound: a paused reader is not a silent provider). Any other
   * answer (an error before the stream, a provider that answered JSON) is read whole, as post() does.
   */
  async open(request: UpstreamRequest): Promise<OpenedAnswer> {
    const outgoing = await this.outgoing(request, 'text/event-stream');
    return new Promise((resolve, reject) => {
      let stream:
        (UpstreamStream & { sink: StreamSink | null; early: Buffer[]; ended: AppError | 'end' | null }) | null = null;
      const answer = new AnswerReader(this.maxResponseBytes);
      const call = this.track();
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: call.start,
        onResponseStart: (controller, statusCode, headers) => {
          if (!this.readHead(request, answer, controller, statusCode, headers)) return;
          const { status, contentType, requestId } = answer;
          if (status < 200 || status >= 300 || !contentType.toLowerCase().startsWith('text/event-stream')) return;
          const opened = {
            kind: 'stream' as const,
            status,
            contentType,
            requestId,
            sink: null as StreamSink | null,
            early: [] as Buffer[],
            ended: null as AppError | 'end' | null,
            attach(sink: StreamSink) {
              opened.sink = sink;
              for (const chunk of opened.early.splice(0)) sink.data(chunk);
              if (opened.ended === 'end') sink.end();
              else if (opened.ended !== null) sink.error(opened.ended);
            },
            pause: () => controller.pause(),
            resume: () => controller.resume(),
            abort: (reason: AppError) => controller.abort(reason),
          };
          stream = opened;
          resolve(opened);
        },
        onResponseData: (controller, chunk) => {
          if (stream !== null) {
            if (stream.sink) stream.sink.data(chunk);
            else stream.early.push(chunk);
            return;
          }
          this.readChunk(answer, controller, chunk);
        },
        onResponseEnd: () => {
          call.end();
          if (stream !== null) {
            if (stream.sink) stream.sink.end();
            else stream.ended = 'end';
            return;
          }
          resolve({ kind: 'whole', response: answer.response() });
        },
        onResponseError: (_controller, err) => {
          call.end();
          const failure = this.answerFailure(answer, err);
          if (stream !== null) {
            if (stream.sink) stream.sink.error(failure);
            else stream.ended = failure;
            return;
          }
          reject(failure);
        },
      };
      this.dispatch(outgoing, { headersTimeout: this.timeoutMs, bodyTimeout: 0 }, handler, reject);
    });
  }

  /** Where a call goes and what it sends, its authentication done. */
  private async outgoing(request: UpstreamRequest, accept: string): Promise<Outgoing> {
    const { origin, basePath } = this.target(request.baseUrl);
    const path = `${basePath}${request.path}`;
    const body = wholeBody(request.body);
    const headers = await this.headers(request, accept, origin, path, body);
    return { origin, path, request, headers, body };
  }

  /** A call's controller, in flight from its start until `end`: abortAll() reaches it. */
  private track(): InFlightCall {
    const call: InFlightCall = {
      controller: null,
      start: (controller: Dispatcher.DispatchController) => {
        call.controller = controller;
        this.inFlight.add(controller);
      },
      end: () => {
        if (call.controller !== null) this.inFlight.delete(call.controller);
      },
    };
    return call;
  }

  /** Reads an answer's head; false when its type is refused (and the call aborted with the 502). */
  private readHead(
    request: UpstreamRequest,
    answer: AnswerReader,
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): boolean {
    const refused = this.refusedType(request, statusCode, headers);
    if (refused !== null) {
      controller.abort(refused);
      return false;
    }
    answer.head(statusCode, headers);
    return true;
  }

  /** Collects a chunk of an answer read whole; past maxResponseBytes the call is aborted. */
  private readChunk(answer: AnswerReader, controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!answer.add(chunk)) controller.abort(this.tooLarge());
  }

  /** What a call that failed rejects with (what it collected is dropped). */
  private answerFailure(answer: AnswerReader, err: Error): AppError {
    answer.clear();
    return err instanceof AppError ? err : this.failure(err, answer.status !== 0);
  }

  /** Sends one call to its origin's pool; a dispatch that throws rejects the call. */
  private dispatch(
    outgoing: Outgoing,
    timeouts: { headersTimeout: number; bodyTimeout: number },
    handler: Dispatcher.DispatchHandler,
    reject: (err: AppError) => void,
  ): void {
    const { origin, path, request, headers, body } = outgoing;
    const { headersTimeout, bodyTimeout } = timeouts;
    try {
      const method = request.method ?? 'POST';
      this.pool(origin, request).dispatch(
        { origin, path, method, headers, body, headersTimeout, bodyTimeout },
        handler,
      );
    } catch (err) {
      reject(this.failure(err));
    }
  }

  /**
   * A call's headers: the route's, the body's type and length, what the answer may be (`accept` unless
   * the route says), and its authentication, which sees all of them and the body.
   */
  private async headers(
    request: UpstreamRequest,
    accept: string,
    origin: string,
    path: string,
    body: Buffer | Readable | undefined,
  ): Promise<Record<string, string>> {
    const { auth } = request;
    const headers: Record<string, string> = {
      ...(typeof auth === 'function' ? undefined : auth),
      ...request.headers,
      accept: request.accept ?? accept,
    };
    if (this.loopMark !== null) {
      const { header, mark } = this.loopMark;
      headers[header] = request.via === undefined ? mark : [...request.via, mark].join(', ');
    }
    if (request.contentType !== undefined) headers['content-type'] = request.contentType;
    if (request.contentLength !== undefined) headers['content-length'] = String(request.contentLength);
    if (typeof auth !== 'function') return headers;
    const outgoing = {
      method: request.method ?? 'POST',
      url: `${origin}${path}`,
      headers,
      body: Buffer.isBuffer(body) ? body : null,
    };
    let own;
    try {
      own = await auth(outgoing);
    } catch (err) {
      if (err instanceof AppError) throw err;
      const message = 'gatelog could not authenticate the call to the provider.';
      throw new AppError(502, 'upstream_authentication_failed', message, null, {}, err);
    }
    return Object.assign(headers, own);
  }

  private tooLarge(): AppError {
    return new AppError(
      502,
      'upstream_response_too_large',
      `The provider's answer is larger than ${this.maxResponseBytes} bytes (GATELOG_UPSTREAM_MAX_RESPONSE_BYTES).`,
    );
  }

  private timeout(cause?: unknown): AppError {
    return new AppError(
      504,
      'upstream_timeout',
      `The provider did not answer within ${this.timeoutMs} ms.`,
      null,
      {},
      cause,
    );
  }

  /**
   * An undici failure as the envelope's 504 (too slow) or 502: unreachable, or its connection lost
   * once it had begun to answer (`answering`), which is worth telling apart when reading the log.
   */
  private failure(err: unknown, answering = false): AppError {
    const code = (err as { code?: string }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return this.timeout(err);
    if (answering) {
      const message = 'The connection to the provider was lost before its answer ended.';
      return new AppError(502, 'upstream_connection_lost', message, null, {}, err);
    }
    const cause = connectCause(err);
    const message = `The provider could not be reached${cause ? `: ${cause}` : ''}.`;
    return new AppError(502, 'upstream_unreachable', message, null, {}, err);
  }

  /** Ends every call in flight with `error` (a shutdown past its deadline). */
  abortAll(error: AppError): void {
    for (const call of this.inFlight) call.abort(error);
    this.inFlight.clear();
  }

  async close(): Promise<void> {
    await this.pools.close();
  }
}

/**
 * A body given as text is sent as its UTF-8 bytes (undici would make them anyway): an authentication
 * that signs the body signs those.
 */
function wholeBody(body: UpstreamRequest['body']): Buffer | Readable | undefined {
  return typeof body === 'string' ? Buffer.from(body) : body;
}

/**
 * Why a connection could not be made, as the system said it (`ECONNREFUSED 127.0.0.1:8000`, a DNS name not
 * found, a TLS certificate refused): the log's error message, where the person setting up a provider
 * looks, rather than only the service log.
 */
export function connectCause(err: unknown): string | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const { code, syscall, hostname, address, port } = e as NodeJS.ErrnoException & {
      hostname?: string;
      address?: string;
      port?: number;
    };
    if (typeof code !== 'string' || code.startsWith('UND_ERR')) continue;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the name ${hostname ?? ''} was not found (${code})`;
    if (address !== undefined) return `${code} ${address}${port !== undefined ? `:${port}` : ''}`;
    if (syscall === undefined) return `${e.message} (${code})`;
    return code;
  }
  return null;
}

interface Outgoing {
  origin: string;
  path: string;
  request: UpstreamRequest;
  headers: Record<string, string>;
  body: Buffer | Readable | undefined;
}

interface InFlightCall {
  controller: Dispatcher.DispatchController | null;
  start(controller: Dispatcher.DispatchController): void;
  end(): void;
}

/**
 * What a call learns of its answer: the head (status, type, request id, Retry-After) and, when it is read
 * whole, its body, collected as it arrives.
 */
class AnswerReader {
  status = 0;
  contentType = 'application/json';
  requestId: string | undefined;
  retryAfter: number | undefined;
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(private readonly maxBytes: number) {}

  /** Called again after a 1xx informational answer: only the last one counts. */
  head(statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    const type = headers['content-type'];
    if (type !== undefined) this.contentType = String(type);
    // Anthropic names it request-id.
    const id = headers['x-request-id'] ?? headers['request-id'];
    this.requestId = id === undefined ? undefined : String(id);
    if (statusCode >= 400) this.retryAfter = retryAfterSeconds(headers['retry-after']);
    this.clear();
  }

  /** False, keeping nothing, once the body is larger than maxBytes. */
  add(chunk: Buffer): boolean {
    this.received += chunk.length;
    if (this.received > this.maxBytes) return false;
    this.chunks.push(chunk);
    return true;
  }

  clear(): void {
    this.chunks.length = 0;
    this.received = 0;
  }

  response(): UpstreamResponse {
    const { status, contentType, requestId, retryAfter, chunks } = this;
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    return { status, contentType, body, requestId, retryAfter };
  }
}
