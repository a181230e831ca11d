/**
 * POST /api/responses as a proxied route (the core runs it, core/lifecycle.ts; docs/api.md "Responses API"). Not
 * streamed, the provider's JSON goes back unchanged and is read for the log. Streamed, each event goes
 * back as it arrives (stream-pipeline.ts) while ResponseAssembler keeps what the log needs; the
 * provider's last event (`response.completed`) carries the whole response and its usage. A Responses
 * stream has no `[DONE]`: request_breakdown is one more event just before that last one. Cached
 * (docs/api.md "Response cache"): a completed response is kept, and a hit answers it as JSON or as its
 * events replayed (replay.ts).
 */
import { AppError } from '../../errors.js';
import { replayedAnswer } from '../core/replayed-answer.js';
import { outputLimit, promptTexts } from '../core/demand.js';
import { attemptedModel } from '../../logs/indexed-text.js';
import { upstreamObject } from '../core/answers.js';
import type { ProxiedRoute } from '../core/contract.js';
import { AssemblingReader } from '../core/assembling-reader.js';
import type { ProxiedCall } from '../core/call.js';
import type { StreamEnd, StreamFault, StreamFaultCode, StreamReader } from '../core/stream-contract.js';
import { eventObject, jsonAnswer, jsonCall, logSampling, takeJsonBody } from '../core/json-call.js';
import { requestBreakdown, seconds } from '../core/record.js';
import { reportUsage, usageSoFar } from '../core/usage.js';
import { responsesUsageOf } from '../../providers/openai/usage.js';
import { ResponseAssembler, TERMINAL_EVENTS } from './assembler.js';
import { completeLog, count } from './log.js';
import { replayResponseAsStream } from './replay.js';
import { completionMessage, parseResponsesRequest, promptMessages, type ResponsesRequest } from './request.js';
import { endedEarly, inBandFault } from '../core/stream-fault.js';

export const RESPONSES_PATH = '/responses';
/** The SSE event name of the request_breakdown event of a stream. */
export const BREAKDOWN_EVENT = 'request_breakdown';

type Json = Record<string, unknown>;

export interface PreparedResponse {
  request: ResponsesRequest;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Whether the call's request decides its answer. Not for a call in a `conversation`: the provider
 * answers it from the conversation's items as they stand, and adds the answer to them, so the same
 * request is a new question each time (and an answer from the cache would never reach the conversation).
 */
const requestDecides = ({ upstreamBody }: ResponsesRequest) =>
  upstreamBody.conversation === undefined || upstreamBody.conversation === null;

/** A response the cache keeps: whole and successful (not queued, in progress, incomplete or failed). */
const keepable = (response: Json | null): response is Json => response?.status === 'completed';

export const responsesRoute: ProxiedRoute<PreparedResponse> = {
  logType: 'response',
  // Azure OpenAI serves the Responses API outside its deployments' URLs: not this route's kind yet.
  providerRoute: 'responses',
  model: ({ request }) => request.model,

  async prepare(call, body) {
    const fields = takeJsonBody(call, body);
    const { log } = call;
    log.prompt_messages = promptMessages(fields.instructions, fields.input);
    log.stream = fields.stream === true;
    logSampling(log, fields);
    log.max_tokens = count(fields.max_output_tokens) ?? null;
    const request = parseResponsesRequest(fields);
    log.model = request.model;
    return { request };
  },

  upstreamCall({ request }, model) {
    return jsonCall(RESPONSES_PATH, request, model);
  },

  streams: ({ request }) => request.stream,

  demand: ({ request }) => ({
    prompt: promptTexts([request.upstreamBody.instructions, request.upstreamBody.input, request.upstreamBody.tools]),
    maxOutputTokens: outputLimit(request.upstreamBody.max_output_tokens),
  }),

  async answer({ request }, upstream, call) {
    const parsed = upstreamObject(upstream.body);
    await reportUsage(call, completeLog(call, parsed, null));
    const keep = keepable(parsed) && requestDecides(request) ? () => upstream.body.toString('utf8') : undefined;
    return jsonAnswer(call, upstream, parsed, () => breakdownOf(call, request), keep);
  },

  streamReader({ request }, call, dispatchedAt) {
    return new ResponseStreamReader(call, request, dispatchedAt);
  },

  cache: {
    request: ({ request }) => {
      // Not cached at all: no lookup, and its answer is not kept (requestDecides).
      if (!requestDecides(request)) return null;
      const { stream: _stream, stream_options: _options, model: _model, ...decisive } = request.upstreamBody;
      return decisive;
    },
    replay: ({ request }, stored, call) =>
      replayedAnswer(call, request.stream, stored, {
        usage: (response) => completeLog(call, response, null),
        breakdown: () => breakdownOf(call, request),
        asStream: (response, last) => replayResponseAsStream(response, { last }),
        breakdownEvent: (_response, breakdown) => breakdownEventOf(breakdown),
      }),
  },
};

/**
 * The request_breakdown event, just before the stream's last event: `type: "keepalive"`, the one type
 * the OpenAI clients' stream helpers read as carrying no part of the response, so that they still
 * build the same response from the stream.
 */
function breakdownEventOf(breakdown: Json): string {
  const data = { type: 'keepalive', request_breakdown: { ...breakdown, stream: true } };
  return `event: ${BREAKDOWN_EVENT}\ndata: ${JSON.stringify(data)}\n\n`;
}

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
class ResponseStreamReader extends AssemblingReader<ResponseAssembler, ResponsesRequest> implements StreamReader {
  constructor(call: ProxiedCall, request: ResponsesRequest, dispatchedAt: number) {
    super(call, request, dispatchedAt, ResponseAssembler);
  }

  event(message: { data: string }, out: { write(text: string): void }): 'forward' {
    const event = eventObject(message.data);
    if (event.type === 'error' || isObject(event.error)) {
      this.inBandError = errorFault(event);
      return 'forward';
    }
    this.assembler.add(event, performance.now());
    if (event.type === 'response.failed') {
      const error = isObject(event.response) ? event.response.error : null;
      this.inBandError = isObject(error)
        ? errorFault({ error })
        : inBandFault('The provider reported the response failed.', null);
    } else if (TERMINAL_EVENTS.has(String(event.type)) && this.call.params.requestBreakdown) {
      out.write(this.breakdownEvent());
    }
    return 'forward';
  }

  errorEvent(error: AppError, code: StreamFaultCode): string {
    return responsesErrorEvent(error, code);
  }

  /** The request_breakdown event, once the last event has given the whole response. */
  private breakdownEvent(): string {
    const { log } = this.call;
    const response = this.assembler.finalResponse ?? {};
    const usage = isObject(response.usage) ? response.usage : null;
    const model = typeof response.model === 'string' && response.model !== '' ? response.model : this.request.model;
    log.model = attemptedModel(model) ?? log.model;
    log.latency = seconds(this.dispatchedAt, performance.now());
    usageSoFar(this.call, log.model ?? this.request.model, usage === null ? null : responsesUsageOf(usage));
    log.completion_message = completionMessage(this.assembler.response()).message;
    return breakdownEventOf(breakdownOf(this.call, this.request));
  }

  /** The response's terminal event (completed, incomplete or failed) has been read. */
  complete(): boolean {
    return this.assembler.terminal !== null;
  }

  fault(): StreamFault | null {
    if (this.inBandError !== null) return this.inBandError;
    return this.assembler.terminal === null ? endedEarly('The provider ended its stream before its last event.') : null;
  }

  end(call: ProxiedCall, generationSeconds: number | null): Promise<StreamEnd> {
    const usage = completeLog(call, this.assembler.response(), generationSeconds);
    // The last event's response is whole (the log's copy of it is capped, this is not).
    const whole = this.assembler.finalResponse;
    const completed = this.assembler.terminal === 'response.completed' && keepable(whole);
    const keep = completed && requestDecides(this.request) ? () => JSON.stringify(whole) : undefined;
    return Promise.resolve({ usage, keep });
  }
}

/**
 * The message and code of an error event (`{type: "error", code, message}`) or of an `{error: {code,
 * message}}` object.
 */
function errorFault(event: Json): StreamFault {
  const inner = isObject(event.error) ? event.error : null;
  const message =
    typeof event.message === 'string' && event.message !== ''
      ? event.message
      : typeof inner?.message === 'string'
        ? inner.message
        : 'The provider sent an error.';
  return inBandFault(message, event.code ?? inner?.code);
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
