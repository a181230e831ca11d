/**
 * A fake OpenAI-compatible upstream on 127.0.0.1: answers /embeddings, /audio/transcriptions,
 * /chat/completions and the Responses API (/responses and the routes on a stored response,
 * fake-responses.ts) — JSON or a server-sent event stream — the way the provider does, records every
 * request it receives, and can be told to fail, hang or drop the connection, or to break a stream
 * part-way. It is the only fake in the test suite.
 */
import { Busboy, type BusboyHeaders } from '@fastify/busboy';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { fakeResponses, type ResponseExchange, type ResponseScript } from './fake-responses.js';
import { closeFakeServer, cutOffStream, sleep } from './fake-server.js';
import { chatChunksFor, chatCompletionFor, type ChatScript } from './fake-chat-answers.js';
import { writeAsReaderReads } from './sse.js';

export interface RecordedRequest {
  method: string;
  path: string;
  /** The path with its query (an Azure deployment's api-version). */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Parsed JSON body, or null. */
  json: unknown;
  /** Multipart fields (files as {filename, type, size, sha256}), or null. */
  form: Record<string, unknown> | null;
}

export type Behaviour =
  | { kind: 'ok' }
  | { kind: 'fail'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'drop' }
  /** Send a 200's headers and half its body, then reset the connection. */
  | { kind: 'cut' }
  /** Answer as 'ok' does, after a delay. */
  | { kind: 'slow'; ms: number }
  /** Answer embeddings with float arrays even when base64 was asked for. */
  | { kind: 'floats-only' }
  /** A streamed chat answer: reset the connection after `after` events. */
  | { kind: 'stream-reset'; after: number }
  /** A streamed chat answer: go silent after `after` events, never ending the response. */
  | { kind: 'stream-silent'; after: number }
  /** A streamed chat answer: after `after` events only `: ping` comments, every `everyMs`, never ending. */
  | { kind: 'stream-pings'; after: number; everyMs: number }
  /** A streamed chat answer: an event that is not JSON (`data: {not json`) after `after` events, then the rest. */
  | { kind: 'stream-malformed'; after: number }
  /**
   * A streamed answer: an in-band error event after `after` events, then the end (no [DONE]): chat's
   * `{"error": …}`, the Responses API's `event: error`.
   */
  | { kind: 'stream-error'; after: number; message?: string }
  /** A streamed response: a `response.failed` event after `after` events, then the end. */
  | { kind: 'stream-failed'; after: number; message?: string }
  /** A streamed answer: the end after `after` events, without the rest (no [DONE], no last event). */
  | { kind: 'stream-end'; after: number };

/** One /chat/completions exchange as the fake saw it. */
export interface ChatExchange {
  request: RecordedRequest;
  stream: boolean;
  /**
   * Each `data:` event written, as written (without `data: ` and its blank line; `[DONE]` included), with
   * when (performance.now()); for an answer not streamed, its JSON text.
   */
  sent: { at: number; data: string }[];
  /** When the response was complete (performance.now()), or null. */
  endedAt: number | null;
  /** When the connection closed before the fake had ended its response (performance.now()), or null. */
  closedEarlyAt: number | null;
}

export interface FakeUpstream {
  readonly baseUrl: string;
  /** Requests received whole, in order. */
  readonly requests: RecordedRequest[];
  /** Requests whose body was cut off before its end (a form abandoned while it was being sent). */
  readonly abandoned: number;
  /** Requests begun, whole or not. */
  readonly begun: number;
  /** /chat/completions exchanges, in order. */
  readonly chats: ChatExchange[];
  /** Sets what /chat/completions answers from now on; no argument: the default plain text. */
  chat(script?: ChatScript): void;
  /** POST /responses exchanges, in order. */
  readonly responses: ResponseExchange[];
  /** Sets what POST /responses answers from now on; no argument: the default plain text. */
  respond(script?: ResponseScript): void;
  /** Applies to the next requests until changed; `times` limits it, then 'ok' returns. */
  behave(behaviour: Behaviour, times?: number): void;
  close(): Promise<void>;
}

const DIMENSIONS: Record<string, number> = {
  'text-embedding-3-large': 3072,
  'text-embedding-3-small': 1536,
  'text-embedding-ada-002': 1536,
};

export function vectorFor(index: number, dims: number): number[] {
  return Array.from({ length: dims }, (_, i) => Math.fround(((index + 1) * (i + 1)) % 97) / 97);
}

function embeddingsResponse(body: Record<string, unknown>, floatsOnly: boolean) {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  // A list of token ids is one input, not many.
  const count = Array.isArray(body.input) && body.input.every((x) => typeof x === 'number') ? 1 : inputs.length;
  const dims = typeof body.dimensions === 'number' ? body.dimensions : (DIMENSIONS[String(body.model)] ?? 1536);
  const base64 = body.encoding_format === 'base64' && !floatsOnly;
  const data = Array.from({ length: count }, (_, index) => {
    const vector = vectorFor(index, dims);
    const embedding = base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
    return { object: 'embedding', index, embedding };
  });
  const promptTokens = count * 2;
  return {
    object: 'list',
    data,
    model: body.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

function transcriptionResponse(form: Record<string, unknown>): { type: string; body: string } {
  const format = (form.response_format as string | undefined) ?? 'json';
  const text = 'Hello world.';
  if (format === 'text') return { type: 'text/plain; charset=utf-8', body: `${text}\n` };
  if (format === 'srt')
    return { type: 'text/plain; charset=utf-8', body: `1\n00:00:00,000 --> 00:00:01,260\n${text}\n\n` };
  if (format === 'vtt')
    return { type: 'text/plain; charset=utf-8', body: `WEBVTT\n\n00:00:00.000 --> 00:00:01.260\n${text}\n\n` };
  if (format === 'verbose_json') {
    const granularities = (form['timestamp_granularities[]'] as string[] | undefined) ?? ['segment'];
    const verbose: Record<string, unknown> = { task: 'transcribe', language: 'english', duration: 1.26, text };
    if (granularities.includes('segment')) {
      verbose.segments = [
        {
          id: 0,
          seek: 0,
          start: 0,
          end: 1.26,
          text,
          tokens: [1, 2],
          temperature: 0,
          avg_logprob: -0.2,
          compression_ratio: 0.9,
          no_speech_prob: 0.01,
        },
      ];
    }
    if (granularities.includes('word')) {
      verbose.words = [
        { word: 'Hello', start: 0, end: 0.6 },
        { word: 'world', start: 0.6, end: 1.26 },
      ];
    }
    return { type: 'application/json', body: JSON.stringify(verbose) };
  }
  return { type: 'application/json', body: JSON.stringify({ text, usage: { type: 'duration', seconds: 2 } }) };
}

/**
 * The form as the provider would read it (busboy: a 24 MB upload is parsed in ~10 ms, where the fetch
 * API's formData() held the event loop — which the tests share — for 300 ms).
 */
async function parseForm(req: http.IncomingMessage, body: Buffer): Promise<Record<string, unknown>> {
  const form: Record<string, unknown> = {};
  const add = (name: string, entry: unknown) => {
    if (name.endsWith('[]')) form[name] = [...((form[name] as unknown[]) ?? []), entry];
    else form[name] = entry;
  };
  await new Promise<void>((resolve, reject) => {
    const parser = new Busboy({ headers: req.headers as BusboyHeaders });
    parser.on('field', (name: string, value: string) => add(name, value));
    parser.on('file', (name: string, file: Readable, filename: string, _encoding: string, type: string) => {
      const hash = crypto.createHash('sha256');
      let size = 0;
      file.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        size += chunk.length;
      });
      file.on('end', () => add(name, { filename, type, size, sha256: hash.digest('hex') }));
    });
    parser.on('finish', resolve);
    parser.on('error', reject);
    parser.end(body);
  });
  return form;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  let behaviour: Behaviour = { kind: 'ok' };
  let remaining = Infinity;
  const hanging = new Set<http.ServerResponse>();

  let abandoned = 0;
  let begun = 0;
  const chats: ChatExchange[] = [];
  let chatScript: ChatScript = {};
  const responses = fakeResponses();

  const server = http.createServer(async (req, res) => {
    begun += 1;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      abandoned += 1;
      return;
    }
    const body = Buffer.concat(chunks);
    const type = String(req.headers['content-type'] ?? '');
    const json = type.includes('json') && body.length > 0 ? JSON.parse(body.toString()) : null;
    const form = type.includes('multipart/form-data') ? await parseForm(req, body) : null;
    const path = (req.url ?? '/').split('?')[0];
    requests.push({ method: req.method ?? 'GET', path, url: req.url ?? '/', headers: req.headers, body, json, form });

    const current = behaviour;
    if (--remaining <= 0) {
      behaviour = { kind: 'ok' };
      remaining = Infinity;
    }
    if (current.kind === 'hang') {
      hanging.add(res);
      return;
    }
    if (current.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, current.ms));
    if (current.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (current.kind === 'cut') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
      res.write('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,');
      setTimeout(() => req.socket.destroy(), 20);
      return;
    }
    if (current.kind === 'fail') {
      res.writeHead(current.status, { 'content-type': 'application/json', ...current.headers });
      res.end(typeof current.body === 'string' ? current.body : JSON.stringify(current.body));
      return;
    }
    if (path.endsWith('/chat/completions') && json) {
      const exchange: ChatExchange = {
        request: requests.at(-1)!,
        stream: false,
        sent: [],
        endedAt: null,
        closedEarlyAt: null,
      };
      chats.push(exchange);
      await answerChat(
        req,
        res,
        json as Record<string, unknown>,
        chatScript,
        current,
        exchange,
        hanging,
        requests.length,
      );
      return;
    }
    if (await responses.handle(req, res, requests.at(-1)!, current, hanging, requests.length)) return;
    if (path.endsWith('/embeddings') && json) {
      // As the provider does: an id per request, which gatelog passes through.
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${requests.length}` });
      res.end(JSON.stringify(embeddingsResponse(json as Record<string, unknown>, current.kind === 'floats-only')));
      return;
    }
    if (path.endsWith('/audio/transcriptions') && form) {
      const out = transcriptionResponse(form);
      res.writeHead(200, { 'content-type': out.type });
      res.end(out.body);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: { message: `no fake for ${path}`, type: 'invalid_request_error', param: null, code: null },
      }),
    );
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get abandoned() {
      return abandoned;
    },
    get begun() {
      return begun;
    },
    chats,
    chat(script = {}) {
      chatScript = script;
    },
    responses: responses.exchanges,
    respond(script = {}) {
      responses.script = script;
    },
    close: () => closeFakeServer(server, hanging),
    behave(next, times = Infinity) {
      behaviour = next;
      remaining = times;
    },
  };
}

/** Answers one /chat/completions request: JSON, or a stream that `behaviour` may break part-way. */
async function answerChat(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: Record<string, unknown>,
  script: ChatScript,
  behaviour: Behaviour,
  exchange: ChatExchange,
  hanging: Set<http.ServerResponse>,
  sequence: number,
): Promise<void> {
  // Seen on the response, whose 'close' comes both when the connection goes and after a normal end.
  res.on('close', () => {
    if (exchange.endedAt === null) exchange.closedEarlyAt = performance.now();
  });
  const id = `chatcmpl-fake${sequence}`;
  const created = Math.floor(Date.now() / 1000);
  const model = String(body.model);
  const headers = { 'x-request-id': `req_${sequence}` };
  if (body.stream !== true) {
    const answer = JSON.stringify(chatCompletionFor(script, model, id, created));
    exchange.sent.push({ at: performance.now(), data: answer });
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(answer);
    exchange.endedAt = performance.now();
    return;
  }
  exchange.stream = true;
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  const events = chatChunksFor(script, model, id, created, options?.include_usage === true);
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
  res.flushHeaders();
  const gone = () => exchange.closedEarlyAt !== null || res.destroyed;
  // Written as the provider writes: one event at a time, waiting for the reader when its buffer is full.
  const send = async (data: string) => {
    exchange.sent.push({ at: performance.now(), data });
    await writeAsReaderReads(res, `data: ${data}\n\n`);
  };
  const fault = behaviour.kind.startsWith('stream-') ? (behaviour as Extract<Behaviour, { after: number }>) : null;
  if (script.firstEventDelayMs) await sleep(script.firstEventDelayMs);
  for (let at = 0; at <= events.length; at++) {
    if (gone()) return;
    if (fault && at === fault.after) {
      if (await cutOffStream(fault.kind, req, res, hanging)) return;
      if (fault.kind === 'stream-pings') {
        hanging.add(res);
        const ping = setInterval(() => res.write(': ping\n\n'), fault.everyMs);
        res.once('close', () => clearInterval(ping));
        return;
      }
      if (fault.kind === 'stream-malformed') await send('{not json');
      if (fault.kind === 'stream-end') {
        exchange.endedAt = performance.now();
        res.end();
        return;
      }
      if (fault.kind === 'stream-error') {
        const message = fault.message ?? 'The server had an error while processing your request.';
        await send(JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } }));
        exchange.endedAt = performance.now();
        res.end();
        return;
      }
    }
    if (at === events.length) break;
    if (at > 0 && script.eventDelayMs) await sleep(script.eventDelayMs);
    if (gone()) return;
    await send(events[at]);
  }
  if (gone()) return;
  await send('[DONE]');
  if (script.endDelayMs) await sleep(script.endDelayMs);
  if (gone()) return;
  exchange.endedAt = performance.now();
  res.end();
}
