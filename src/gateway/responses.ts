/**
 * POST /api/responses as a proxied route (proxy-call.ts runs it; docs/api.md "Responses API"). Not
 * streamed, the provider's JSON goes back unchanged and is read for the log. Streamed, each event goes
 * back as it arrives (stream-pipeline.ts) while ResponseAssembler keeps what the log needs; the
 * provider's last event (`response.completed`) carries the whole response and its usage. A Responses
 * stream has no `[DONE]`: request_breakdown is one more event just before that last one.
 */
import { AppError } from '../errors.js';
import { attemptedModel } from '../logs/indexed-text.js';
import { takePlatformParams } from './platform-params.js';
import { type ProxiedCall, type ProxiedRoute, requestBreakdown, seconds } from './proxy-call.js';
import { ResponseAssembler, TERMINAL_EVENTS } from './responses-assembler.js';
import {
  completionMessage,
  parseResponsesRequest,
  promptMessages,
  type ResponsesRequest,
} from './responses-request.js';
import type { StreamFaultCode, StreamOutcome, StreamReader } from './stream-pipeline.js';

export const RESPONSES_PATH = '/responses';
/** The SSE event name of the request_breakdown event of a stream. */
export const BREAKDOWN_EVENT = 'request_breakdown';

type Json = Record<string, unknown>;

export interface PreparedResponse {
  request: ResponsesRequest;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const MAX_TOKENS_LOGGED = 1_000_000_000;

/** A token count from the provider, at most a billion (two still fit the log's 32-bit total). */
const count = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.min(Math.round(v), MAX_TOKENS_LOGGED) : undefined;

export const responsesRoute: ProxiedRoute<PreparedResponse> = {
  logType: 'response',
  // Azure OpenAI serves the Responses API outside its deployments' URLs: not this route's kind yet.
  kinds: ['openai'],
  model: ({ request }) => request.model,

  async prepare(call, body) {
    if (!isObject(body)) throw new AppError(400, 'invalid_value', 'The body must be a JSON object.', null);
    const fields = { ...body };
    const { log } = call;
    log.model = attemptedModel(fields.model);
    call.params = takePlatformParams(fields);
    log.prompt_messages = promptMessages(fields.instructions, fields.input);
    log.stream = fields.stream === true;
    log.tools = fields.tools;
    log.tool_choice = fields.tool_choice;
    log.temperature = typeof fields.temperature === 'number' ? fields.temperature : null;
    log.max_tokens = count(fields.max_output_tokens) ?? null;
    const request = parseResponsesRequest(fields);
    log.model = request.model;
    return { request };
  },

  upstreamCall({ request }, model) {
    return {
      path: RESPONSES_PATH,
      contentType: 'application/json',
      body: JSON.stringify(model === request.model ? request.upstreamBody : { ...request.upstreamBody, model }),
      accept: request.stream ? 'text/event-stream' : 'application/json',
    };
  },

  streams: ({ request }) => request.stream,

  async answer({ request }, upstream, call) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(upstream.body.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    if (!isObject(parsed)) {
      throw new AppError(502, 'upstream_invalid_response', 'The provider answered with a body that is not JSON.');
    }
    await completeLog(call, parsed, null);
    if (!call.params.requestBreakdown) {
      return { status: 200, contentType: upstream.contentType, body: upstream.body };
    }
    const withBreakdown = { ...parsed, request_breakdown: breakdownOf(call, request) };
    return { status: 200, contentType: 'application/json', body: JSON.stringify(withBreakdown) };
  },

  streamReader({ request }, call, dispatchedAt) {
    return new ResponseStreamReader(call, request, dispatchedAt);
  },
};

/**
 * The event that ends a response's stream that broke off: an `error` event as the provider sends one
 * (type, code, message), with the `error` object the OpenAI clients raise from any event.
 */
export function responsesErrorEvent(error: AppError, code: StreamFaultCode): string {
  const data = {
    type: 'error',
    code,
    message: error.message,
    param: null,
    error: { message: error.message, type: 'upstream_error', code },
  };
  return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Reads a response's stream events for the log; every event goes to the client as it came. */
class ResponseStreamReader implements StreamReader {
  private readonly assembler: ResponseAssembler;
  /** An `error` event, or a `response.failed` one, that the provider sent in the stream. */
  private inBandError: string | null = null;

  constructor(
    private readonly call: ProxiedCall,
    private readonly request: ResponsesRequest,
    private readonly dispatchedAt: number,
  ) {
    this.assembler = new ResponseAssembler(call.deps.config.logMaxBytes);
  }

  event(message: { data: string }, out: { write(text: string): void }): 'forward' {
    let event: unknown;
    try {
      event = JSON.parse(message.data);
    } catch {
      throw new AppError(502, 'upstream_invalid_response', 'The provider sent an event that is not JSON.');
    }
    if (!isObject(event))
      throw new AppError(502, 'upstream_invalid_response', 'The provider sent an event that is not an object.');
    if (event.type === 'error' || isObject(event.error)) {
      this.inBandError = errorMessage(event);
      return 'forward';
    }
    this.assembler.add(event, performance.now());
    if (event.type === 'response.failed') {
      const error = isObject(event.response) ? event.response.error : null;
      this.inBandError = isObject(error) ? errorMessage({ error }) : 'The provider reported the response failed.';
    } else if (TERMINAL_EVENTS.has(String(event.type)) && this.call.params.requestBreakdown) {
      out.write(this.breakdownEvent());
    }
    return 'forward';
  }

  errorEvent(error: AppError, code: StreamFaultCode): string {
    return responsesErrorEvent(error, code);
  }

  /**
   * The request_breakdown event, just before the stream's last event: `type: "keepalive"`, the one type
   * the OpenAI clients' stream helpers read as carrying no part of the response, so that they still
   * build the same response from the stream.
   */
  private breakdownEvent(): string {
    const { log } = this.call;
    const response = this.assembler.finalResponse ?? {};
    const usage = isObject(response.usage) ? response.usage : null;
    const model = typeof response.model === 'string' && response.model !== '' ? response.model : this.request.model;
    log.model = attemptedModel(model) ?? log.model;
    log.prompt_tokens = count(usage?.input_tokens) ?? log.prompt_tokens;
    log.completion_tokens = count(usage?.output_tokens) ?? log.completion_tokens;
    log.latency = seconds(this.dispatchedAt, performance.now());
    log.cost = costOf(this.call, usage, log.model ?? this.request.model);
    log.completion_message = completionMessage(this.assembler.response()).message;
    const breakdown = { ...breakdownOf(this.call, this.request), stream: true };
    return `event: ${BREAKDOWN_EVENT}\ndata: ${JSON.stringify({ type: 'keepalive', request_breakdown: breakdown })}\n\n`;
  }

  async end(outcome: StreamOutcome): Promise<void> {
    const { log } = this.call;
    const now = performance.now();
    const first = this.assembler.firstOutputAt;
    log.time_to_first_token = first === null ? null : seconds(this.dispatchedAt, first);
    if (outcome.kind === 'client_gone') {
      log.status_code = 499;
      log.error_message = 'client disconnected';
    } else if (outcome.kind === 'failed') {
      log.status_code = outcome.error.status;
      log.error_message = outcome.error.message;
    } else if (this.inBandError !== null) {
      log.status_code = 502;
      log.error_message = this.inBandError;
    } else if (this.assembler.terminal === null) {
      log.status_code = 502;
      log.error_message = 'The provider ended its stream before its last event.';
    }
    log.latency = seconds(this.dispatchedAt, now);
    await completeLog(this.call, this.assembler.response(), first === null ? null : seconds(first, now));
  }
}

/** The message of an error event (`{type: "error", message}`) or of an `{error: {message}}` object. */
function errorMessage(event: Json): string {
  if (typeof event.message === 'string' && event.message !== '') return event.message;
  if (isObject(event.error) && typeof event.error.message === 'string') return event.error.message;
  return 'The provider sent an error.';
}

/** The call's log from the whole response (the provider's JSON, or the stream's). */
async function completeLog(call: ProxiedCall, response: Json, generationSeconds: number | null): Promise<void> {
  const { log } = call;
  if (typeof response.model === 'string' && response.model !== '')
    log.model = attemptedModel(response.model) ?? log.model;
  const { message, toolCalls } = completionMessage(response);
  log.output = response;
  log.completion_message = message;
  log.tool_calls = toolCalls.length > 0 ? toolCalls : undefined;
  const usage = isObject(response.usage) ? response.usage : null;
  let prompt = count(usage?.input_tokens);
  let completion = count(usage?.output_tokens);
  // A background response is generated after the call that made it, and counted then: nothing to estimate.
  const later = response.background === true && usage === null;
  if ((prompt === undefined || completion === undefined) && !later) {
    // No usage from the provider (a stream cut short, a server that does not count): counted here.
    const estimate = await estimateTokens(call, message);
    prompt ??= estimate.prompt;
    completion ??= estimate.completion;
    call.params.metadata = { ...call.params.metadata, usage_source: 'estimated' };
  }
  const promptTokens = prompt ?? 0;
  const completionTokens = completion ?? 0;
  log.prompt_tokens = promptTokens;
  log.completion_tokens = completionTokens;
  // A failed call (cut off, the client gone) costs 0 in its log, as every failed call does.
  log.cost =
    (log.status_code ?? 200) < 400 ? costOf(call, usage, log.model ?? '', promptTokens, completionTokens) : undefined;
  const generating = generationSeconds ?? log.latency ?? 0;
  if (generating > 0 && completionTokens > 0) log.tokens_per_second = completionTokens / generating;
}

/** USD from the catalog, cached input at its own price; undefined when the model has no price. */
function costOf(
  call: ProxiedCall,
  usage: Json | null,
  model: string,
  promptTokens = count(usage?.input_tokens) ?? 0,
  completionTokens = count(usage?.output_tokens) ?? 0,
): number | undefined {
  const details = isObject(usage?.input_tokens_details) ? usage.input_tokens_details : null;
  const cost = call.deps.prices.cost({
    model,
    providerId: call.provider?.name ?? 'openai',
    promptTokens,
    completionTokens,
    cachedTokens: count(details?.cached_tokens) ?? 0,
  });
  // Unknown: the log marks it (new-log.ts).
  return cost ?? undefined;
}

/** Local token counts: the prompt's texts and the answer's, with gpt-tokenizer on a worker thread. */
async function estimateTokens(call: ProxiedCall, message: Json): Promise<{ prompt: number; completion: number }> {
  const texts = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v ?? '')));
  const prompt = (call.log.prompt_messages ?? []).map((m) => (isObject(m) && 'content' in m ? m.content : m));
  const answer = [message.content, message.refusal, message.tool_calls].filter((v) => v !== null && v !== undefined);
  const limits = { perText: Number.POSITIVE_INFINITY, total: Number.POSITIVE_INFINITY, countAll: true };
  try {
    const [promptCount, completionCount] = await Promise.all([
      call.deps.tokens.measure(texts(prompt), limits),
      call.deps.tokens.measure(texts(answer), limits),
    ]);
    return { prompt: promptCount.total ?? 0, completion: completionCount.total ?? 0 };
  } catch {
    return { prompt: 0, completion: 0 };
  }
}

function breakdownOf(call: ProxiedCall, request: ResponsesRequest): Json {
  const { log } = call;
  return {
    ...requestBreakdown(call, request.upstreamBody),
    prompt_messages: log.prompt_messages ?? null,
    completion_message: log.completion_message ?? null,
    stream: request.stream,
  };
}
