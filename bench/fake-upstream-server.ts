/**
 * A fake OpenAI and Anthropic upstream for load tests: embeddings answered at once with a fixed
 * 1536-dimension response (base64 or float, as asked; a list of inputs gets one vector each, 4 tokens an
 * input); transcriptions read to the end (counted, not kept) and answered with a fixed text; chat
 * completions streamed as OpenAI streams them (see `streamChat`); Anthropic's `POST /v1/messages`
 * streamed as Anthropic streams it (see `streamMessages`). Run as its own process; prints its OpenAI
 * base URL (`…/v1`; Anthropic's base URL is its origin).
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
 * Writes a paced stream: `head` and the first content event after `first_ms`, the next content events
 * `every_ms` apart, the last one with `tail` in one write (a provider's closing events follow its last
 * token closely). Backpressure is honoured: a client that reads slowly slows the stream down.
 */
function pace(
  res: http.ServerResponse,
  shape: StreamShape,
  head: string,
  content: (i: number) => string,
  tail: string,
) {
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
    const event = (i === 0 ? head : '') + content(i);
    if (i === shape.events - 1) {
      res.end(event + tail);
      return;
    }
    const next = () => later(() => send(i + 1), shape.every_ms);
    if (res.write(event)) next();
    else res.once('drain', next);
  };
  later(() => send(0), shape.first_ms);
}

/**
 * A chat completion streamed as OpenAI does: `chat.completion.chunk` events (the first with the role),
 * one with `finish_reason`, the usage-only event when `stream_options.include_usage` asks for it, and
 * `data: [DONE]`.
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
  pace(res, shape, '', content, tail);
}

/** One event of Anthropic's stream: its type named twice, in the `event:` line and in the data. */
const anthropicEvent = (type: string, fields: string) =>
  `event: ${type}\ndata: {"type":"${type}"${fields === '' ? '' : `,${fields}`}}\n\n`;

/**
 * A message streamed as Anthropic does (Messages API, `stream: true`): message_start (the input usage),
 * content_block_start of one text block and a ping — these three leave with the first text_delta, so
 * that a reader's work before the first content is all in the time to it — then the text_delta events,
 * content_block_stop, message_delta (stop_reason and the output usage) and message_stop.
 */
function streamMessages(res: http.ServerResponse, body: Record<string, unknown>): void {
  const shape = shapeOf(body);
  const model = JSON.stringify(typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5');
  const head =
    anthropicEvent(
      'message_start',
      `"message":{"id":"msg_bench_${++streams}","type":"message","role":"assistant","model":${model},"content":[],` +
        '"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,' +
        '"cache_read_input_tokens":0,"output_tokens":1}}',
    ) +
    anthropicEvent('content_block_start', '"index":0,"content_block":{"type":"text","text":""}') +
    anthropicEvent('ping', '');
  const content = (i: number) =>
    anthropicEvent(
      'content_block_delta',
      `"index":0,"delta":{"type":"text_delta","text":${JSON.stringify(PIECES[i % PIECES.length])}}`,
    );
  const tail =
    anthropicEvent('content_block_stop', '"index":0') +
    anthropicEvent(
      'message_delta',
      `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":${shape.events * 3}}`,
    ) +
    anthropicEvent('message_stop', '');
  pace(res, shape, head, content, tail);
}

/** Reads a JSON body and hands its fields on; a body that is not JSON is answered 400. */
function readJson(req: http.IncomingMessage, res: http.ServerResponse, then: (body: Record<string, unknown>) => void) {
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
    then(body);
  });
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
    readJson(req, res, (body) => {
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
  if ((req.url ?? '').endsWith('/v1/messages')) {
    readJson(req, res, (body) => {
      if (body.stream === true) {
        streamMessages(res, body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `msg_bench_${++streams}`,
          type: 'message',
          role: 'assistant',
          model: typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5',
          content: [{ type: 'text', text: PIECES.join('') }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 24 },
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
