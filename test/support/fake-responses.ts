/**
 * The fake provider's Responses API (fake-upstream.ts serves it): POST /responses answers a scripted
 * response as JSON or as the provider's event stream (`event: response.created` … `response.completed`,
 * each event with its `type` and `sequence_number`, no `[DONE]`), keeps it, and GET|DELETE
 * /responses/{id}, GET /responses/{id}/input_items and POST /responses/{id}/cancel read or change what
 * it kept, as the provider does.
 */
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Behaviour, RecordedRequest } from './fake-upstream.js';
import { type StreamPacing, writeAsReaderReads } from './sse.js';

type Json = Record<string, unknown>;

export interface ResponseUsageScript {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

/** What POST /responses answers (JSON or streamed) until the next `respond()` call. */
export interface ResponseScript extends StreamPacing {
  /** The message's text, one piece per output_text.delta event. Default: "Hello, world!" in 4 pieces. */
  text?: string[];
  /** A refusal instead of text, one piece per refusal.delta event. */
  refusal?: string[];
  /** Function calls, each after the message (if any), one argument piece per delta event. */
  functionCalls?: { callId: string; name: string; arguments: string[] }[];
  /** null: no usage at all (as some compatible servers do). */
  usage?: ResponseUsageScript | null;
  /** The model the answer names; default: the request's. */
  model?: string;
  /** `incomplete`: the response stopped at max_output_tokens (its last event response.incomplete). */
  status?: 'completed' | 'incomplete';
}

export const DEFAULT_RESPONSE_TEXT = ['Hello', ', ', 'world', '!'];
export const DEFAULT_RESPONSE_USAGE: ResponseUsageScript = { input_tokens: 19, output_tokens: 4 };

/** One POST /responses exchange as the fake saw it. */
export interface ResponseExchange {
  request: RecordedRequest;
  stream: boolean;
  /**
   * Each event written, its name and data as written (`data` without `data: `), with when
   * (performance.now()); for an answer not streamed, one entry holding its JSON text (event '').
   */
  sent: { at: number; event: string; data: string }[];
  /** When the response was complete (performance.now()), or null. */
  endedAt: number | null;
  /** When the connection closed before the fake had ended its response (performance.now()), or null. */
  closedEarlyAt: number | null;
}

/** A kept response: the whole response, its events and its input items. */
interface Stored {
  response: Json;
  events: { event: string; data: string }[];
  inputItems: Json[];
}

export interface FakeResponses {
  readonly exchanges: ResponseExchange[];
  script: ResponseScript;
  /** Answers a request under /responses; false when the path is not one of them. */
  handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    request: RecordedRequest,
    behaviour: Behaviour,
    hanging: Set<http.ServerResponse>,
    sequence: number,
  ): Promise<boolean>;
}

function usageObject(usage: ResponseUsageScript) {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

/** The response object around `output`, as the provider describes a response. */
function responseObject(
  body: Json,
  script: ResponseScript,
  id: string,
  created: number,
  status: string,
  output: Json[],
) {
  return {
    id,
    object: 'response',
    created_at: created,
    status,
    background: body.background === true,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: script.model ?? String(body.model),
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: null as unknown,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/**
 * The events of a scripted response, as the provider orders them (`response.created`, `in_progress`,
 * each output item added, its parts and deltas, done; then `response.completed` with the whole
 * response and its usage), and that whole response.
 */
export function responseEventsFor(body: Json, script: ResponseScript, id: string, created: number) {
  const events: { event: string; data: string }[] = [];
  let sequence = 0;
  const emit = (type: string, fields: Json) => {
    events.push({ event: type, data: JSON.stringify({ type, ...fields, sequence_number: sequence++ }) });
  };
  const final: Json[] = [];
  const start = responseObject(body, script, id, created, 'in_progress', []);
  emit('response.created', { response: start });
  emit('response.in_progress', { response: start });
  const calls = script.functionCalls ?? [];
  const refusal = script.refusal;
  const text = script.text ?? (refusal || calls.length > 0 ? undefined : DEFAULT_RESPONSE_TEXT);
  if (text || refusal) {
    const output_index = final.length;
    const item_id = `msg_${id.slice(5)}`;
    const message = { id: item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    emit('response.output_item.added', { output_index, item: message });
    const at = { item_id, output_index, content_index: 0 };
    let part: Json;
    if (refusal) {
      emit('response.content_part.added', { ...at, part: { type: 'refusal', refusal: '' } });
      for (const delta of refusal) emit('response.refusal.delta', { ...at, delta });
      part = { type: 'refusal', refusal: refusal.join('') };
      emit('response.refusal.done', { ...at, refusal: refusal.join('') });
    } else {
      const pieces = text!;
      emit('response.content_part.added', {
        ...at,
        part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
      });
      for (const delta of pieces) emit('response.output_text.delta', { ...at, delta, logprobs: [] });
      part = { type: 'output_text', annotations: [], logprobs: [], text: pieces.join('') };
      emit('response.output_text.done', { ...at, text: pieces.join(''), logprobs: [] });
    }
    emit('response.content_part.done', { ...at, part });
    const done = { ...message, status: 'completed', content: [part] };
    emit('response.output_item.done', { output_index, item: done });
    final.push(done);
  }
  calls.forEach((call, i) => {
    const output_index = final.length;
    const item_id = `fc_${id.slice(5)}_${i}`;
    const item = {
      id: item_id,
      type: 'function_call',
      status: 'in_progress',
      arguments: '',
      call_id: call.callId,
      name: call.name,
    };
    emit('response.output_item.added', { output_index, item });
    for (const delta of call.arguments)
      emit('response.function_call_arguments.delta', { item_id, output_index, delta });
    const args = call.arguments.join('');
    emit('response.function_call_arguments.done', { item_id, output_index, name: call.name, arguments: args });
    const done = { ...item, status: 'completed', arguments: args };
    emit('response.output_item.done', { output_index, item: done });
    final.push(done);
  });
  const status = script.status ?? 'completed';
  const response = responseObject(body, script, id, created, status, final);
  const usage = script.usage === undefined ? DEFAULT_RESPONSE_USAGE : script.usage;
  response.usage = usage === null ? null : usageObject(usage);
  emit(status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  return { events, response };
}

/** The input as the provider keeps it: each item with an id, a text as one user message. */
function inputItemsOf(body: Json, id: string): Json[] {
  const input = body.input;
  const items: Json[] =
    typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : [];
  return items.map((item, i) => {
    const withId: Json = { id: `in_${id.slice(5)}_${i}`, ...item };
    if ((item.type ?? 'message') === 'message' && typeof item.content === 'string') {
      const type = item.role === 'assistant' ? 'output_text' : 'input_text';
      return { ...withId, type: 'message', status: 'completed', content: [{ type, text: item.content }] };
    }
    return withId;
  });
}

const notFound = (id: string) => ({
  error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: null },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function fakeResponses(): FakeResponses {
  const exchanges: ResponseExchange[] = [];
  const stored = new Map<string, Stored>();
  const fake: FakeResponses = {
    exchanges,
    script: {},
    async handle(req, res, request, behaviour, hanging, sequence) {
      const match = /\/responses(?:\/([^/]+)(\/input_items|\/cancel)?)?$/.exec(request.path);
      if (!match) return false;
      const headers = { 'content-type': 'application/json', 'x-request-id': `req_${sequence}` };
      const [, rawId, sub] = match;
      if (rawId === undefined) {
        if (request.method !== 'POST' || request.json === null) return false;
        await create(req, res, request, behaviour, hanging, sequence);
        return true;
      }
      const id = decodeURIComponent(rawId);
      const entry = stored.get(id);
      const query = new URL(request.url, 'http://fake').searchParams;
      if (entry === undefined) {
        res.writeHead(404, headers);
        res.end(JSON.stringify(notFound(id)));
        return true;
      }
      if (sub === '/input_items' && request.method === 'GET') {
        res.writeHead(200, headers);
        res.end(JSON.stringify(inputItemsPage(entry.inputItems, query)));
      } else if (sub === '/cancel' && request.method === 'POST') {
        if (entry.response.background !== true) {
          res.writeHead(400, headers);
          const message = 'Only responses created with background=true can be cancelled.';
          res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
          return true;
        }
        entry.response = { ...entry.response, status: 'cancelled' };
        res.writeHead(200, headers);
        res.end(JSON.stringify(entry.response));
      } else if (sub === undefined && request.method === 'GET' && query.get('stream') === 'true') {
        res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8' });
        for (const { event, data } of entry.events) res.write(`event: ${event}\ndata: ${data}\n\n`);
        res.end();
      } else if (sub === undefined && request.method === 'GET') {
        res.writeHead(200, headers);
        res.end(JSON.stringify(entry.response));
      } else if (sub === undefined && request.method === 'DELETE') {
        stored.delete(id);
        res.writeHead(200, headers);
        res.end(JSON.stringify({ id, object: 'response', deleted: true }));
      } else {
        return false;
      }
      return true;
    },
  };

  function inputItemsPage(items: Json[], query: URLSearchParams) {
    const ordered = query.get('order') === 'asc' ? items : [...items].reverse();
    const after = query.get('after');
    const from = after === null ? 0 : ordered.findIndex((item) => item.id === after) + 1;
    const limit = Number(query.get('limit') ?? 20);
    const data = ordered.slice(from, from + limit);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: from + limit < ordered.length,
    };
  }

  async function create(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    request: RecordedRequest,
    behaviour: Behaviour,
    hanging: Set<http.ServerResponse>,
    sequence: number,
  ): Promise<void> {
    const body = request.json as Json;
    const exchange: ResponseExchange = { request, stream: false, sent: [], endedAt: null, closedEarlyAt: null };
    exchanges.push(exchange);
    res.on('close', () => {
      if (exchange.endedAt === null) exchange.closedEarlyAt = performance.now();
    });
    const id = `resp_fake${sequence}`;
    const script = fake.script;
    const { events, response } = responseEventsFor(body, script, id, Math.floor(Date.now() / 1000));
    if (body.store !== false) stored.set(id, { response, events, inputItems: inputItemsOf(body, id) });
    const headers = { 'x-request-id': `req_${sequence}` };
    if (body.stream !== true) {
      // A background response is answered at once, queued, and generated later (here: already kept whole).
      const answer = JSON.stringify(
        body.background === true ? { ...response, status: 'queued', output: [], usage: null } : response,
      );
      exchange.sent.push({ at: performance.now(), event: '', data: answer });
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(answer);
      exchange.endedAt = performance.now();
      return;
    }
    exchange.stream = true;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
    res.flushHeaders();
    const gone = () => exchange.closedEarlyAt !== null || res.destroyed;
    // Written as the provider writes: one event at a time, waiting for the reader when its buffer is full.
    const send = async (event: string, data: string) => {
      exchange.sent.push({ at: performance.now(), event, data });
      await writeAsReaderReads(res, `event: ${event}\ndata: ${data}\n\n`);
    };
    const fault = behaviour.kind.startsWith('stream-') ? (behaviour as Extract<Behaviour, { after: number }>) : null;
    if (script.firstEventDelayMs) await sleep(script.firstEventDelayMs);
    for (let at = 0; at < events.length; at++) {
      if (gone()) return;
      if (fault && at === fault.after) {
        if (fault.kind === 'stream-reset') {
          // The events written so far leave first (the response holds its socket corked until the next tick).
          await sleep(20);
          req.socket.destroy();
          return;
        }
        if (fault.kind === 'stream-silent') {
          hanging.add(res);
          return;
        }
        if (fault.kind === 'stream-malformed') await send('response.output_text.delta', '{not json');
        if (fault.kind === 'stream-error' || fault.kind === 'stream-failed' || fault.kind === 'stream-end') {
          const message =
            ('message' in fault ? fault.message : undefined) ??
            'The server had an error while processing your request.';
          const error = { code: 'server_error', message };
          if (fault.kind === 'stream-error') {
            await send('error', JSON.stringify({ type: 'error', ...error, param: null, sequence_number: at }));
          } else if (fault.kind === 'stream-failed') {
            const failed = { ...response, status: 'failed', error, usage: null };
            await send(
              'response.failed',
              JSON.stringify({ type: 'response.failed', response: failed, sequence_number: at }),
            );
          }
          exchange.endedAt = performance.now();
          res.end();
          return;
        }
      }
      if (at > 0 && script.eventDelayMs) await sleep(script.eventDelayMs);
      if (gone()) return;
      await send(events[at].event, events[at].data);
    }
    if (script.endDelayMs) await sleep(script.endDelayMs);
    if (gone()) return;
    exchange.endedAt = performance.now();
    res.end();
  }

  return fake;
}
