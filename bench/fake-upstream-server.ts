/**
 * A fake OpenAI upstream for load tests: embeddings answered at once with a fixed 1536-dimension
 * response (base64 or float, as asked; a list of inputs gets one vector each, 4 tokens an input); transcriptions read to the end (counted, not kept) and answered
 * with a fixed text; chat completions streamed as OpenAI streams them (see `streamChat`). Run as its
 * own process; prints its base URL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const vector = Array.from({ length: 1536 }, (_, i) => ((i * 7) % 97) / 97);
const base64 = Buffer.from(new Float32Array(vector).buffer).toString('base64');
const response = (embedding: unknown) =>
  Buffer.from(
    JSON.stringify({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding }],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    }),
  );
const bodies = { base64: response(base64), float: response(vector) };

const transcription = Buffer.from(JSON.stringify({ text: 'Hello world.' }));

/**
 * How a fake chat stream is paced: `first_ms` before the first event, `every_ms` between two content
 * events (0: the next event on the next turn of the event loop, so that each still leaves as its own
 * write, as a provider's tokens do), `events` content events of a few tokens each. The caller sends it
 * as the body's `bench_stream` field, which gatelog passes upstream as any unknown field.
 */
interface StreamShape {
  first_ms: number;
  every_ms: number;
  events: number;
}
const DEFAULT_SHAPE: StreamShape = { first_ms: 0, every_ms: 0, events: 20 };
const PIECES = [
  ' The gateway',
  ' logs every',
  ' call it',
  ' passes on,',
  ' streamed or',
  ' not, and',
  ' answers at',
  ' once.',
];
let streams = 0;
/** Chat streams open now, and the most open at once since the last `GET …/bench/streams`. */
let open = 0;
let peak = 0;

function shapeOf(body: Record<string, unknown>): StreamShape {
  const asked = body.bench_stream;
  if (asked === null || typeof asked !== 'object') return DEFAULT_SHAPE;
  const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fallback);
  const { first_ms: firstMs, every_ms: everyMs, events } = asked as Record<string, unknown>;
  return {
    first_ms: num(firstMs, DEFAULT_SHAPE.first_ms),
    every_ms: num(everyMs, DEFAULT_SHAPE.every_ms),
    events: Math.max(1, Math.floor(num(events, DEFAULT_SHAPE.events))),
  };
}

/**
 * A chat completion streamed as OpenAI does: `chat.completion.chunk` events (the first with the role),
 * one with `finish_reason`, the usage-only event when `stream_options.include_usage` asks for it, and
 * `data: [DONE]`. The last three leave in one write with the last content event: a provider's follow it
 * closely. Backpressure is honoured: a client that reads slowly slows the stream down.
 */
function streamChat(res: http.ServerResponse, body: Record<string, unknown>): void {
  const shape = shapeOf(body);
  const options = body.stream_options as Record<string, unknown> | undefined;
  const usage = options !== null && typeof options === 'object' && options.include_usage === true;
  const head = `data: {"id":"chatcmpl-bench-${++streams}","object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":"gpt-4o-mini","choices":`;
  const content = (i: number) =>
    `${head}[{"index":0,"delta":{${i === 0 ? '"role":"assistant",' : ''}"content":${JSON.stringify(PIECES[i % PIECES.length])}},"finish_reason":null}]}\n\n`;
  const tokens = shape.events * 3;
  const tail =
    `${head}[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n` +
    (usage
      ? `${head}[],"usage":{"prompt_tokens":12,"completion_tokens":${tokens},"total_tokens":${tokens + 12}}}\n\n`
      : '') +
    'data: [DONE]\n\n';
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  peak = Math.max(peak, ++open);
  let closed = false;
  res.once('close', () => {
    closed = true;
    open--;
  });
  const later = (fn: () => void, ms: number) => (ms > 0 ? setTimeout(fn, ms) : setImmediate(fn));
  const send = (i: number): void => {
    if (closed) return;
    if (i === shape.events - 1) {
      res.end(content(i) + tail);
      return;
    }
    const next = () => later(() => send(i + 1), shape.every_ms);
    if (res.write(content(i))) next();
    else res.once('drain', next);
  };
  later(() => send(0), shape.first_ms);
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && (req.url ?? '').endsWith('/bench/streams')) {
    // How many streams a proxy in front held open at once: a proxy that bounds its upstream connections
    // shows its bound here.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ open, peak }));
    peak = open;
    return;
  }
  if ((req.url ?? '').endsWith('/chat/completions')) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not JSON","type":"invalid_request_error"}}');
        return;
      }
      if (body.stream === true) {
        streamChat(res, body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-bench-${++streams}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: PIECES.join('') }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 12, completion_tokens: 24, total_tokens: 36 },
        }),
      );
    });
    return;
  }
  if ((req.url ?? '').endsWith('/audio/transcriptions')) {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-received-bytes': String(bytes) });
      res.end(transcription);
    });
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const asked = raw.includes('"base64"') ? 'base64' : 'float';
    res.writeHead(200, { 'content-type': 'application/json' });
    // The one-input body of the proxy benchmarks is fixed; a list of inputs is answered input by input.
    const input = raw.includes('"input":[') ? (JSON.parse(raw.toString('utf8')) as { input: unknown[] }).input : null;
    if (input === null || input.length <= 1) {
      res.end(bodies[asked]);
      return;
    }
    const embedding = asked === 'base64' ? base64 : vector;
    res.end(
      JSON.stringify({
        object: 'list',
        data: input.map((_, index) => ({ object: 'embedding', index, embedding })),
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: 4 * input.length, total_tokens: 4 * input.length },
      }),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`http://127.0.0.1:${port}/v1`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
