/**
 * A fake Anthropic Messages API on 127.0.0.1: answers POST /v1/messages with a message (JSON) or its
 * event stream (`message_start`, `content_block_*`, `ping`, `message_delta`, `message_stop`) the way
 * Anthropic does, records every request it receives, and can be told to fail, or to break a stream
 * part-way (reset, silence, a malformed event, an in-band `error` event).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface AnthropicRecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  json: Record<string, unknown> | null;
}

/** One content block of a scripted answer; each array element is one streamed delta. */
export type BlockScript =
  | { type: 'text'; text: string[] }
  | { type: 'thinking'; thinking: string[]; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: string[] };

export interface AnthropicUsageScript {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  /** Of cache_creation_input_tokens, those written to the one-hour cache. */
  ephemeral_1h_input_tokens?: number;
}

export interface MessageScript {
  blocks?: BlockScript[];
  usage?: AnthropicUsageScript;
  /** The model the answer names; default: the request's. */
  model?: string;
  /** Default: 'tool_use' when a block calls a tool, else 'end_turn'. */
  stopReason?: string;
  firstEventDelayMs?: number;
  eventDelayMs?: number;
}

export type AnthropicBehaviour =
  | { kind: 'ok' }
  | { kind: 'fail'; status: number; body: unknown; headers?: Record<string, string> }
  /** A streamed answer: reset the connection after `after` events. */
  | { kind: 'stream-reset'; after: number }
  /** A streamed answer: go silent after `after` events. */
  | { kind: 'stream-silent'; after: number }
  /** A streamed answer: an event whose data is not JSON after `after` events, then the rest. */
  | { kind: 'stream-malformed'; after: number }
  /** A streamed answer: an in-band `event: error` after `after` events, then the end. */
  | { kind: 'stream-error'; after: number };

export const DEFAULT_TEXT = ['Hello', ', ', 'world', '!'];
export const DEFAULT_ANTHROPIC_USAGE: AnthropicUsageScript = { input_tokens: 21, output_tokens: 6 };

/** One /v1/messages exchange as the fake saw it. */
export interface MessagesExchange {
  request: AnthropicRecordedRequest;
  /** Each event written, as written (`event: …\ndata: …\n\n`), with when; or the JSON answer. */
  sent: { at: number; text: string }[];
  endedAt: number | null;
  closedEarlyAt: number | null;
}

export interface FakeAnthropic {
  /** The base URL (Anthropic's paths, /v1/messages, go under it). */
  readonly baseUrl: string;
  readonly exchanges: MessagesExchange[];
  script(script?: MessageScript): void;
  behave(behaviour: AnthropicBehaviour, times?: number): void;
  close(): Promise<void>;
}

const blocksOf = (script: MessageScript): BlockScript[] => script.blocks ?? [{ type: 'text', text: DEFAULT_TEXT }];

function stopReasonOf(script: MessageScript): string {
  return script.stopReason ?? (blocksOf(script).some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
}

function usageObject(usage: AnthropicUsageScript, output: number) {
  const written = usage.cache_creation_input_tokens ?? 0;
  const forAnHour = usage.ephemeral_1h_input_tokens ?? 0;
  return {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: written - forAnHour, ephemeral_1h_input_tokens: forAnHour },
    output_tokens: output,
    service_tier: 'standard',
  };
}

/** The whole message, as Anthropic answers when not streaming. */
export function messageFor(script: MessageScript, requestModel: string, id: string) {
  const usage = script.usage ?? DEFAULT_ANTHROPIC_USAGE;
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: script.model ?? requestModel,
    content: blocksOf(script).map((block) => {
      if (block.type === 'text') return { type: 'text', text: block.text.join('') };
      if (block.type === 'thinking')
        return { type: 'thinking', thinking: block.thinking.join(''), signature: block.signature };
      return { type: 'tool_use', id: block.id, name: block.name, input: JSON.parse(block.input.join('')) as unknown };
    }),
    stop_reason: stopReasonOf(script),
    stop_sequence: null,
    usage: usageObject(usage, usage.output_tokens),
  };
}

/** The events of a streamed answer, each as its `event:`/`data:` text, in Anthropic's order. */
export function eventsFor(script: MessageScript, requestModel: string, id: string): string[] {
  const usage = script.usage ?? DEFAULT_ANTHROPIC_USAGE;
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const events = [
    event('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: script.model ?? requestModel,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageObject(usage, 1),
      },
    }),
    event('ping', {}),
  ];
  blocksOf(script).forEach((block, index) => {
    if (block.type === 'text') {
      events.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const text of block.text)
        events.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }));
    } else if (block.type === 'thinking') {
      events.push(
        event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      );
      for (const thinking of block.thinking)
        events.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } }));
      events.push(
        event('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } }),
      );
    } else {
      events.push(
        event('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        }),
      );
      for (const partial of block.input)
        events.push(
          event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partial } }),
        );
    }
    events.push(event('content_block_stop', { index }));
  });
  // As Anthropic does: message_delta's usage repeats the input counts, cumulative, with the final output.
  events.push(
    event('message_delta', {
      delta: { stop_reason: stopReasonOf(script), stop_sequence: null },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
        output_tokens: usage.output_tokens,
      },
    }),
  );
  events.push(event('message_stop', {}));
  return events;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const exchanges: MessagesExchange[] = [];
  let behaviour: AnthropicBehaviour = { kind: 'ok' };
  let remaining = Infinity;
  let script: MessageScript = {};
  const hanging = new Set<http.ServerResponse>();
  let sequence = 0;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const json = body === '' ? null : (JSON.parse(body) as Record<string, unknown>);
    const path = (req.url ?? '/').split('?')[0];
    const exchange: MessagesExchange = {
      request: { path, headers: req.headers, json },
      sent: [],
      endedAt: null,
      closedEarlyAt: null,
    };
    exchanges.push(exchange);
    res.on('close', () => {
      if (exchange.endedAt === null) exchange.closedEarlyAt = performance.now();
    });
    const current = behaviour;
    if (--remaining <= 0) {
      behaviour = { kind: 'ok' };
      remaining = Infinity;
    }
    sequence += 1;
    // Anthropic's name for it, not x-request-id.
    const headers = { 'request-id': `req_fake${sequence}` };
    if (current.kind === 'fail') {
      res.writeHead(current.status, { 'content-type': 'application/json', ...headers, ...current.headers });
      res.end(typeof current.body === 'string' ? current.body : JSON.stringify(current.body));
      exchange.endedAt = performance.now();
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages' || json === null) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no fake for ${path}` } }));
      exchange.endedAt = performance.now();
      return;
    }
    const id = `msg_fake${sequence}`;
    const model = String(json.model);
    if (json.stream !== true) {
      const text = JSON.stringify(messageFor(script, model, id));
      exchange.sent.push({ at: performance.now(), text });
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(text);
      exchange.endedAt = performance.now();
      return;
    }
    const events = eventsFor(script, model, id);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
    res.flushHeaders();
    const gone = () => exchange.closedEarlyAt !== null || res.destroyed;
    const send = async (text: string) => {
      exchange.sent.push({ at: performance.now(), text });
      if (!res.write(text)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    };
    const fault = current.kind.startsWith('stream-')
      ? (current as Extract<AnthropicBehaviour, { after: number }>)
      : null;
    if (script.firstEventDelayMs) await sleep(script.firstEventDelayMs);
    for (let at = 0; at <= events.length; at++) {
      if (gone()) return;
      if (fault && at === fault.after) {
        if (fault.kind === 'stream-reset') {
          await sleep(20);
          req.socket.destroy();
          return;
        }
        if (fault.kind === 'stream-silent') {
          hanging.add(res);
          return;
        }
        if (fault.kind === 'stream-malformed') await send('event: content_block_delta\ndata: {not json\n\n');
        if (fault.kind === 'stream-error') {
          const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
          await send(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
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
    exchange.endedAt = performance.now();
    res.end();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    exchanges,
    script(next = {}) {
      script = next;
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
