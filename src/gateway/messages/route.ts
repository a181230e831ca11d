/**
 * POST /api/anthropic/v1/messages as a proxied route (the core runs it, gateway/core/lifecycle.ts;
 * docs/api.md "Anthropic Messages API"): Anthropic's own API, to providers of kind `anthropic`. Not
 * streamed, the provider's JSON goes back unchanged and is read for the log. Streamed, each event
 * (`message_start` … `message_stop`) goes back as it arrives (gateway/core/stream-pipeline.ts) while
 * AnthropicAssembler rebuilds the message for the log; request_breakdown is one more event, just before
 * `message_stop`. Cached (docs/api.md "Response cache"): a whole message is kept, and a hit answers it as
 * JSON or as its events replayed (replay.ts).
 */
import { AppError } from '../../errors.js';
import { replayedAnswer } from '../core/replayed-answer.js';
import { outputLimit, promptTexts } from '../core/demand.js';
import { attemptedModel } from '../../logs/indexed-text.js';
import { ANTHROPIC_VERSION } from '../../providers/anthropic/protocol.js';
import { AnthropicAssembler } from './assembler.js';
import { completeLog, promptMessages, loggedUsageOf, completionMessage } from './log.js';
import { loggedCount } from '../../providers/usage.js';
import { replayMessageAsStream } from './replay.js';
import { type Forwarded, type MessagesRequest, parseMessagesRequest } from './request.js';
import { upstreamObject } from '../core/answers.js';
import type { ProxiedRoute } from '../core/contract.js';
import { AssemblingReader } from '../core/assembling-reader.js';
import type { ProxiedCall } from '../core/call.js';
import type { StreamEnd, StreamFault, StreamFaultCode, StreamReader } from '../core/stream-contract.js';
import { eventObject, jsonAnswer, jsonCall, logSampling, takeJsonBody } from '../core/json-call.js';
import { requestBreakdown, seconds } from '../core/record.js';
import { reportUsage, usageSoFar } from '../core/usage.js';
import { endedEarly, inBandFault } from '../core/stream-fault.js';

/** Anthropic's path for the call, under the provider's base URL. */
export const MESSAGES_PATH = '/v1/messages';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What the HTTP handler gives the route: the body, and the caller's headers and query that go upstream. */
export interface MessagesInput {
  body: unknown;
  forwarded: Forwarded;
}

export interface PreparedMessages {
  request: MessagesRequest;
}

export const anthropicMessagesRoute: ProxiedRoute<PreparedMessages> = {
  logType: 'chat',
  providerRoute: 'messages',
  model: ({ request }) => request.model,

  async prepare(call, input) {
    const { body, forwarded } = input as MessagesInput;
    const fields = takeJsonBody(call, body);
    const { log } = call;
    if (Array.isArray(fields.messages)) log.prompt_messages = promptMessages(fields.system, fields.messages);
    const request = parseMessagesRequest(fields, call.params, forwarded);
    log.model = request.model;
    log.stream = request.stream;
    logSampling(log, fields);
    log.max_tokens = loggedCount(fields.max_tokens) ?? null;
    return { request };
  },

  upstreamCall({ request }, model) {
    return jsonCall(`${MESSAGES_PATH}${request.query}`, request, model, request.headers);
  },

  streams: ({ request }) => request.stream,

  demand: ({ request }) => ({
    prompt: promptTexts([request.system, ...request.messages.map((m) => m.content), request.upstreamBody.tools]),
    maxOutputTokens: outputLimit(request.upstreamBody.max_tokens),
  }),

  async answer({ request }, upstream, call) {
    const parsed = upstreamObject(upstream.body);
    await reportUsage(
      call,
      completeLog(call, request, { message: parsed, outputCounted: true, generationSeconds: null }),
    );
    const keep = parsed.type === 'message' ? () => upstream.body.toString('utf8') : undefined;
    return jsonAnswer(call, upstream, parsed, () => breakdownOf(call, request), keep);
  },

  streamReader({ request }, call, dispatchedAt) {
    return new MessagesStreamReader(call, request, dispatchedAt);
  },

  cache: {
    request: ({ request }) => {
      const { stream: _stream, stream_options: _options, model: _model, ...decisive } = request.upstreamBody;
      // Marked as this API's: the chat route keys a Claude call by its own (OpenAI-shaped) body, which
      // can be the same JSON as a Messages body while its stored answer is a chat completion. The
      // anthropic-version and anthropic-beta headers go upstream too, and can change the answer; so can
      // the query (kept out of the key when there is none, so that keys made before it still match).
      const headers = { 'anthropic-version': ANTHROPIC_VERSION, ...request.headers };
      const query = request.query === '' ? {} : { query: request.query };
      return { api: 'anthropic-messages', body: decisive, headers, ...query };
    },
    replay: ({ request }, stored, call) =>
      replayedAnswer(call, request.stream, stored, {
        usage: (message) => completeLog(call, request, { message, outputCounted: true, generationSeconds: null }),
        breakdown: () => breakdownOf(call, request),
        asStream: (message, last) => replayMessageAsStream(message, { last }),
        breakdownEvent: (_message, breakdown) => breakdownEventOf(breakdown),
      }),
  },
};

/**
 * The request_breakdown event of a stream, just before message_stop: an event of its own, which
 * Anthropic's clients read past (their stream helpers know only Anthropic's event types).
 */
function breakdownEventOf(breakdown: Json): string {
  const data = { type: 'request_breakdown', request_breakdown: { ...breakdown, stream: true } };
  return `event: request_breakdown\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Reads a Messages stream's events for the log; every event goes on to the client as it came. */
class MessagesStreamReader extends AssemblingReader<AnthropicAssembler, MessagesRequest> implements StreamReader {
  constructor(call: ProxiedCall, request: MessagesRequest, dispatchedAt: number) {
    super(call, request, dispatchedAt, AnthropicAssembler);
  }

  event(message: { event?: string; data: string }, out: { write(text: string): void }): 'forward' {
    const data = eventObject(message.data);
    if (data.type === 'error' || message.event === 'error') {
      const error = isObject(data.error) ? data.error : {};
      const text = typeof error.message === 'string' ? error.message : 'The provider sent an error.';
      // Anthropic's code is its error's type (overloaded_error).
      this.inBandError = inBandFault(text, error.type);
      return 'forward';
    }
    this.assembler.add(data, performance.now());
    if (data.type === 'message_stop' && this.call.params.requestBreakdown) out.write(this.breakdownEvent());
    return 'forward';
  }

  /** Anthropic's error event, so that its clients raise it as they raise Anthropic's own. */
  errorEvent(error: AppError, code: StreamFaultCode): string {
    const type = code === 'stream_timeout' ? 'timeout_error' : 'api_error';
    const data = { type: 'error', error: { type, message: error.message, code } };
    return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
  }

  /** Just before message_stop, once message_delta has given the final counts. */
  private breakdownEvent(): string {
    const { log } = this.call;
    const usage = loggedUsageOf(this.assembler.usageSoFar);
    log.latency = seconds(this.dispatchedAt, performance.now());
    const model = attemptedModel(this.assembler.model) ?? log.model ?? this.request.model;
    log.model = model;
    // Every input token (input_tokens not known yet: the cache's alone).
    usageSoFar(this.call, model, {
      ...usage,
      input: usage.input ?? usage.cacheRead + usage.cacheWrite,
      output: usage.output ?? 0,
    });
    log.completion_message = completionMessage(this.assembler.message());
    return breakdownEventOf(breakdownOf(this.call, this.request));
  }

  /** message_stop has been read. */
  complete(): boolean {
    return this.assembler.finished;
  }

  fault(): StreamFault | null {
    if (this.inBandError !== null) return this.inBandError;
    return this.assembler.finished ? null : endedEarly('The provider ended its stream before message_stop.');
  }

  async end(call: ProxiedCall, generationSeconds: number | null): Promise<StreamEnd> {
    const { assembler } = this;
    const message = assembler.message();
    const usage = completeLog(call, this.request, {
      message,
      outputCounted: assembler.outputCounted,
      generationSeconds,
    });
    // Only a whole answer is kept: the stream ran to message_stop, and the log's copy holds all of its text.
    const whole = assembler.finished && assembler.outputCounted && !assembler.cut;
    return Promise.resolve({ usage, keep: whole ? () => JSON.stringify(message) : undefined });
  }
}

function breakdownOf(call: ProxiedCall, request: MessagesRequest): Json {
  const { log } = call;
  return {
    ...requestBreakdown(call, request.upstreamBody),
    prompt_messages: log.prompt_messages ?? promptMessages(request.system, request.messages),
    completion_message: log.completion_message ?? null,
    stream: request.stream,
  };
}
