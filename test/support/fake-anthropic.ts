/**
 * A fake Anthropic Messages API on 127.0.0.1: answers POST /v1/messages/count_tokens with
 * `{"input_tokens": N}`, and POST /v1/messages with a message (JSON) or its
 * event stream (message_start, content_block_start, ping, content_block_delta, content_block_stop,
 * message_delta, message_stop) as Anthropic writes them — text, tool_use with input_json_delta pieces,
 * thinking with its signature_delta, usage with cache reads and writes (five-minute and one-hour). It
 * checks a request the way Anthropic does where a translation could go wrong (the key and version
 * headers, max_tokens, roles, empty text blocks, fields Anthropic does not know — unless told to
 * accept them, as a newer Anthropic would) and answers errors in Anthropic's shape. It records every
 * request and every answer's bytes as written, honours backpressure, and can be told to fail, to wait
 * before its first event, or to break a stream part-way (an in-band `error` event, an early end, a
 * reset, silence, a malformed event). The test's script says what the next answers hold.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { closeFakeServer, cutOffStream, sleep } from './fake-server.js';
import { type AnthropicEvent, messageEventsFor, messageFor, type MessageScript } from './fake-anthropic-answers.js';
import { writeAsReaderReads } from './sse.js';

type Json = Record<string, unknown>;

export interface AnthropicRecordedRequest {
  method: string;
  path: string;
  /** The query string as it came, `?` included ('' for none). */
  query: string;
  headers: http.IncomingHttpHeaders;
  /** The headers as they came, names and values in order, one entry per header line. */
  rawHeaders: string[];
  /** The key, from `x-api-key` or `Authorization: Bearer` (Anthropic takes both), or null. */
  apiKey: string | null;
  body: Buffer;
  /** Parsed JSON body, or null. */
  json: Json | null;
}

export type AnthropicBehaviour =
  | { kind: 'ok' }
  /** An error answer in Anthropic's shape: `{"type":"error","error":{type,message},"request_id"}`. */
  | { kind: 'error'; status: number; type: string; message?: string; headers?: Record<string, string> }
  /** A streamed answer: an in-band `event: error` after `after` events, then the end (no message_stop). */
  | { kind: 'stream-error'; after: number; type?: string; message?: string }
  /** A streamed answer: the response ends in good order after `after` events, before message_stop. */
  | { kind: 'stream-cut'; after: number }
  /** A streamed answer: the connection is reset after `after` events. */
  | { kind: 'stream-reset'; after: number }
  /** A streamed answer: nothing more after `after` events, the connection left open. */
  | { kind: 'stream-silent'; after: number }
  /** A streamed answer: an event whose data is not JSON after `after` events, then the rest. */
  | { kind: 'stream-malformed'; after: number };

/** What /v1/messages/count_tokens answers unless told otherwise. */
export const DEFAULT_COUNT = 17;

/** One piece of an answer as written: an event (`text` is its `event:`/`data:` lines), or a JSON body. */
export interface SentPiece {
  /** performance.now() when written. */
  at: number;
  /** The event's name; 'json' for a JSON answer (an error's too). */
  event: string;
  data: string;
  /** The bytes written. */
  text: string;
}

/** One exchange (every request makes one, an error answer too) as the fake saw it. */
export interface MessagesExchange {
  request: AnthropicRecordedRequest;
  /** The answer's status. */
  status: number;
  stream: boolean;
  sent: SentPiece[];
  /** When the response was complete (performance.now()), or null. */
  endedAt: number | null;
  /** When the caller closed the connection before the response was complete, or null. */
  closedEarlyAt: number | null;
}

export interface FakeAnthropic {
  /** The base URL as Anthropic's client takes it (the client adds /v1/messages). */
  readonly baseUrl: string;
  /** Requests received, in order. */
  readonly requests: AnthropicRecordedRequest[];
  /** One per request, in order: `requests[i]` is `exchanges[i].request`. */
  readonly exchanges: MessagesExchange[];
  /** Sets what /v1/messages answers from now on; no argument: the default plain text. */
  message(script?: MessageScript): void;
  /** Sets the input_tokens /v1/messages/count_tokens answers from now on (default DEFAULT_COUNT). */
  count(inputTokens?: number): void;
  /** Applies to the next requests until changed; `times` limits it, then 'ok' returns. */
  behave(behaviour: AnthropicBehaviour, times?: number): void;
  close(): Promise<void>;
}

/** Anthropic's error body. */
export function errorBody(type: string, message: string, requestId: string): Json {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

/** The top-level fields Anthropic's Messages API knows; any other is a 400 there. */
const KNOWN_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
  'output_config',
]);

/** The top-level fields Anthropic's count_tokens knows (no max_tokens, metadata or stream). */
const COUNT_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'mcp_servers',
  'context_management',
  'output_config',
]);

export const MESSAGES_PATH = '/v1/messages';
export const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

/**
 * What Anthropic would refuse in the request (the checks a translation could fail), or null.
 * `unknownFields`: a field Anthropic does not know is accepted (as by a newer Anthropic), not refused.
 */
function refusal(
  req: AnthropicRecordedRequest,
  unknownFields: 'refuse' | 'accept',
): { status: number; type: string; message: string } | null {
  const counting = req.path === COUNT_TOKENS_PATH;
  const known = counting ? COUNT_FIELDS : KNOWN_FIELDS;
  if (req.apiKey === null) {
    return { status: 401, type: 'authentication_error', message: 'x-api-key header is required' };
  }
  if (typeof req.headers['anthropic-version'] !== 'string') {
    return { status: 400, type: 'invalid_request_error', message: 'anthropic-version: header is required' };
  }
  const body = req.json;
  const bad = (message: string) => ({ status: 400, type: 'invalid_request_error', message });
  if (body === null) return bad('The request body is not valid JSON.');
  for (const name of Object.keys(body))
    if (!known.has(name) && unknownFields === 'refuse') return bad(`${name}: Extra inputs are not permitted`);
  if (typeof body.model !== 'string') return bad('model: Field required');
  if (!counting && (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens)))
    return bad('max_tokens: Field required');
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return bad('messages: at least one message is required');
  for (const [i, message] of (body.messages as Json[]).entries()) {
    if (message.role !== 'user' && message.role !== 'assistant') {
      return bad(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    const blocks = Array.isArray(message.content) ? (message.content as Json[]) : [];
    if (blocks.some((b) => b.type === 'text' && b.text === '')) {
      return bad(`messages.${i}: text content blocks must be non-empty`);
    }
  }
  if (typeof body.temperature === 'number' && (body.temperature < 0 || body.temperature > 1)) {
    return bad('temperature: Input should be less than or equal to 1');
  }
  return null;
}

export interface FakeAnthropicOptions {
  /** A field Anthropic does not know: refused (the default, as Anthropic does) or accepted. */
  unknownFields?: 'refuse' | 'accept';
}

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const requests: AnthropicRecordedRequest[] = [];
  const exchanges: MessagesExchange[] = [];
  let behaviour: AnthropicBehaviour = { kind: 'ok' };
  let remaining = Infinity;
  let script: MessageScript = {};
  let inputTokens = DEFAULT_COUNT;
  /** Streams told to go silent: ended when the fake closes. */
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return;
    }
    const body = Buffer.concat(chunks);
    let json: Json | null = null;
    try {
      const parsed: unknown = body.length > 0 ? JSON.parse(body.toString('utf8')) : null;
      json = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Json) : null;
    } catch {
      json = null;
    }
    const url = req.url ?? '/';
    const at = url.indexOf('?');
    const path = at < 0 ? url : url.slice(0, at);
    const query = at < 0 ? '' : url.slice(at);
    const bearer = /^Bearer (.+)$/i.exec(String(req.headers.authorization ?? ''));
    const key = req.headers['x-api-key'];
    const apiKey = typeof key === 'string' && key !== '' ? key : (bearer?.[1] ?? null);
    const recorded = {
      method: req.method ?? 'GET',
      path,
      query,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      apiKey,
      body,
      json,
    };
    requests.push(recorded);
    const exchange: MessagesExchange = {
      request: recorded,
      status: 200,
      stream: false,
      sent: [],
      endedAt: null,
      closedEarlyAt: null,
    };
    exchanges.push(exchange);
    res.on('close', () => {
      if (exchange.endedAt === null) exchange.closedEarlyAt = performance.now();
    });
    const sequence = requests.length;
    // Anthropic's name for it, not x-request-id.
    const requestId = `req_fake${sequence}`;
    const answerJson = (status: number, text: string, headers: Record<string, string> = {}) => {
      exchange.status = status;
      exchange.sent.push({ at: performance.now(), event: 'json', data: text, text });
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers });
      res.end(text);
      exchange.endedAt = performance.now();
    };
    const answerError = (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
      answerJson(status, JSON.stringify(errorBody(type, message, requestId)), headers);
    if (req.method !== 'POST' || (path !== MESSAGES_PATH && path !== COUNT_TOKENS_PATH)) {
      answerError(404, 'not_found_error', `Not found: ${req.method} ${path}`);
      return;
    }
    const current = behaviour;
    if (--remaining <= 0) {
      behaviour = { kind: 'ok' };
      remaining = Infinity;
    }
    const refused = refusal(recorded, options.unknownFields ?? 'refuse');
    if (refused !== null) {
      answerError(refused.status, refused.type, refused.message);
      return;
    }
    if (current.kind === 'error') {
      answerError(current.status, current.type, current.message ?? `Fake ${current.type}`, current.headers);
      return;
    }
    if (path === COUNT_TOKENS_PATH) {
      answerJson(200, JSON.stringify({ input_tokens: inputTokens }));
      return;
    }
    const id = `msg_fake${sequence}`;
    const model = String(json!.model);
    if (json!.stream !== true) {
      answerJson(200, JSON.stringify(messageFor(script, model, id)));
      return;
    }
    exchange.stream = true;
    await stream(req, res, { events: messageEventsFor(script, model, id), script, behaviour: current }, exchange, {
      requestId,
      hanging,
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    exchanges,
    message(next = {}) {
      script = next;
    },
    count(next = DEFAULT_COUNT) {
      inputTokens = next;
    },
    behave(next, times = Infinity) {
      behaviour = next;
      remaining = times;
    },
    close: () => closeFakeServer(server, hanging),
  };
}

/** Writes a streamed answer's events, one at a time (waiting while the caller does not read), or its fault. */
async function stream(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  answer: { events: AnthropicEvent[]; script: MessageScript; behaviour: AnthropicBehaviour },
  exchange: MessagesExchange,
  { requestId, hanging }: { requestId: string; hanging: Set<http.ServerResponse> },
): Promise<void> {
  const { events, script, behaviour } = answer;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': requestId,
  });
  res.flushHeaders();
  const gone = () => exchange.closedEarlyAt !== null || res.destroyed;
  const send = async (event: string, data: string) => {
    const text = `event: ${event}\ndata: ${data}\n\n`;
    exchange.sent.push({ at: performance.now(), event, data, text });
    await writeAsReaderReads(res, text);
  };
  const end = () => {
    exchange.endedAt = performance.now();
    res.end();
  };
  const fault = behaviour.kind.startsWith('stream-')
    ? (behaviour as Extract<AnthropicBehaviour, { after: number }>)
    : null;
  if (script.firstEventDelayMs) await sleep(script.firstEventDelayMs);
  for (let at = 0; at <= events.length; at++) {
    if (gone()) return;
    if (fault !== null && at === fault.after) {
      switch (fault.kind) {
        case 'stream-reset':
        case 'stream-silent':
          await cutOffStream(fault.kind, req, res, hanging);
          return;
        case 'stream-cut':
          end();
          return;
        case 'stream-error': {
          const error = errorBody(fault.type ?? 'overloaded_error', fault.message ?? 'Overloaded', requestId);
          delete error.request_id;
          await send('error', JSON.stringify(error));
          end();
          return;
        }
        case 'stream-malformed':
          await send('content_block_delta', '{not json');
          break;
      }
    }
    if (at === events.length) break;
    if (at > 0 && script.eventDelayMs) await sleep(script.eventDelayMs);
    if (gone()) return;
    await send(events[at].event, events[at].data);
  }
  if (script.endDelayMs) await sleep(script.endDelayMs);
  if (gone()) return;
  end();
}
