/**
 * A fake OpenAI-compatible upstream on 127.0.0.1: answers /embeddings and /audio/transcriptions the way
 * the provider does, records every request it receives, and can be told to fail, hang or drop the
 * connection. It is the only fake in the test suite.
 */
import { Busboy, type BusboyHeaders } from '@fastify/busboy';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';

export interface RecordedRequest {
  method: string;
  path: string;
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
  | { kind: 'floats-only' };

export interface FakeUpstream {
  readonly baseUrl: string;
  /** Requests received whole, in order. */
  readonly requests: RecordedRequest[];
  /** Requests whose body was cut off before its end (a form abandoned while it was being sent). */
  readonly abandoned: number;
  /** Requests begun, whole or not. */
  readonly begun: number;
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
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, json, form });

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
    behave(next, times = Infinity) {
      behaviour = next;
      remaining = times;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
