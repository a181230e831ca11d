/**
 * POST /api/chat/completions as a proxied route (proxy-call.ts runs it; docs/api.md "Chat completions").
 * Not streamed, the provider's JSON goes back unchanged and is read for the log. Streamed, each event
 * goes back as it arrives (stream-pipeline.ts) while ChatAssembler rebuilds the completion for the log;
 * the usage event, always asked for upstream, is held back when the client did not ask for it, and
 * request_breakdown is one last event before [DONE].
 */
import { AppError } from '../../errors.js';
import { replayedAnswer } from '../core/replayed-answer.js';
import { attemptedModel } from '../../logs/indexed-text.js';
import { ChatAssembler } from './assembler.js';
import { type ChatRequest, parseChatRequest } from './request.js';
import { takePlatformParams } from '../core/platform-params.js';
import { replayAsStream } from './replay.js';
import type { ProviderChoice } from '../../providers/choose-provider.js';
import { type ChatStreamTranslator, type ChatTranslation, DONE_EVENT } from '../../providers/chat-translation.js';
import { chatUsageOf } from '../../providers/openai/usage.js';
import { protocolOf } from '../../providers/protocols.js';
import { loggedCount, type TokenUsage } from '../../providers/usage.js';
import { upstreamObject } from '../core/answers.js';
import type { ProxiedCall, ProxiedRoute, StreamEnd, StreamReader, UsageReport } from '../core/contract.js';
import { requestBreakdown, seconds } from '../core/record.js';
import { reportUsage, usageSoFar } from '../core/usage.js';

export const UPSTREAM_PATH = '/chat/completions';

type Json = Record<string, unknown>;

export interface PreparedChat {
  request: ChatRequest;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * How the chat call goes to the provider serving it: translated to another of its APIs (Claude), or
 * null — the provider speaks OpenAI's.
 */
const translationOf = (provider: ProviderChoice | null): ChatTranslation | null =>
  provider === null ? null : (protocolOf(provider.kind).chat ?? null);

export const chatRoute: ProxiedRoute<PreparedChat> = {
  logType: 'chat',
  // Claude through the OpenAI shape: the call is translated to Anthropic's Messages API and back.
  kinds: ['openai', 'azure', 'anthropic'],
  model: ({ request }) => request.model,

  async prepare(call, body) {
    if (!isObject(body)) throw new AppError(400, 'invalid_value', 'The body must be a JSON object.', null);
    const fields = { ...body };
    const { log } = call;
    log.model = attemptedModel(fields.model);
    call.params = takePlatformParams(fields);
    if (Array.isArray(fields.messages)) log.prompt_messages = fields.messages;
    const request = parseChatRequest(fields);
    log.model = request.model;
    log.stream = request.stream;
    log.tools = fields.tools;
    log.tool_choice = fields.tool_choice;
    log.temperature = typeof fields.temperature === 'number' ? fields.temperature : null;
    const maxTokens = loggedCount(fields.max_completion_tokens ?? fields.max_tokens);
    log.max_tokens = maxTokens ?? null;
    return { request };
  },

  upstreamCall({ request }, model, provider) {
    const translation = translationOf(provider);
    if (translation !== null) {
      return {
        path: translation.path,
        contentType: 'application/json',
        body: JSON.stringify(translation.request(request.upstreamBody, model)),
        accept: request.stream ? 'text/event-stream' : 'application/json',
      };
    }
    return {
      path: UPSTREAM_PATH,
      contentType: 'application/json',
      body: JSON.stringify(model === request.model ? request.upstreamBody : { ...request.upstreamBody, model }),
      accept: request.stream ? 'text/event-stream' : 'application/json',
    };
  },

  streams: ({ request }) => request.stream,

  async answer({ request }, upstream, call) {
    let parsed: Json = upstreamObject(upstream.body);
    const translation = translationOf(call.provider);
    let keep: () => string;
    if (translation !== null) {
      // The provider's answer, told as a chat completion; priced by the provider's own counts.
      const translated = translation.answer(parsed);
      parsed = translated.completion;
      const body = JSON.stringify(parsed);
      await reportUsage(call, completeLog(call, request, parsed, null, translated.usage));
      keep = () => body;
      if (!call.params.requestBreakdown)
        return { response: { status: 200, contentType: 'application/json', body }, keep };
    } else {
      await reportUsage(
        call,
        completeLog(call, request, parsed, null, protocolOf(call.provider!.kind).usage(parsed.usage)),
      );
      keep = () => upstream.body.toString('utf8');
      if (!call.params.requestBreakdown) {
        return { response: { status: 200, contentType: upstream.contentType, body: upstream.body }, keep };
      }
    }
    const withBreakdown = { ...parsed, request_breakdown: breakdownOf(call, request) };
    return { response: { status: 200, contentType: 'application/json', body: JSON.stringify(withBreakdown) }, keep };
  },

  streamReader({ request }, call, dispatchedAt) {
    const translator = translationOf(call.provider)?.stream({ includeUsage: request.clientWantsUsage }) ?? null;
    return new ChatStreamReader(call, request, dispatchedAt, translator);
  },

  upstreamError(_prepared, upstream, call) {
    const translation = translationOf(call.provider);
    if (translation === null) return null;
    return {
      contentType: 'application/json',
      body: JSON.stringify(translation.error(upstream.body.toString('utf8'), upstream.status)),
    };
  },

  cache: {
    request: ({ request }) => {
      const { stream: _stream, stream_options: _options, model: _model, ...decisive } = request.upstreamBody;
      return decisive;
    },
    async replay({ request }, stored, call) {
      const completion = JSON.parse(stored) as Json;
      // A stored answer is a chat completion whichever provider gave it: OpenAI's usage.
      await reportUsage(call, completeLog(call, request, completion, null, chatUsageOf(completion.usage)));
      // A hit costs nothing (usage.ts).
      return replayedAnswer({
        stream: request.stream,
        stored,
        answer: completion,
        breakdown: call.params.requestBreakdown ? breakdownOf(call, request) : null,
        asStream: (last) => replayAsStream(completion, { usage: request.clientWantsUsage, last }),
        breakdownEvent: (breakdown) => breakdownChunk(completion, breakdown),
      });
    },
  },
};

/** §15's request_breakdown event: the last before [DONE], with no content for the client's stream helpers. */
function breakdownChunk(head: { id?: unknown; created?: unknown; model?: unknown }, breakdown: Json): string {
  const event = {
    id: head.id ?? null,
    object: 'chat.completion.chunk',
    created: head.created ?? Math.floor(Date.now() / 1000),
    model: head.model ?? null,
    choices: [{ index: 0, delta: {}, finish_reason: null, request_breakdown: breakdown }],
  };
  return `data: ${JSON.stringify(event)}\n\n`;
}

/** Reads a chat stream's events for the log, and decides which the client gets. */
class ChatStreamReader implements StreamReader {
  private readonly assembler: ChatAssembler;
  private done = false;
  /** An error event the provider sent in the stream. */
  private inBandError: string | null = null;

  constructor(
    private readonly call: ProxiedCall,
    private readonly request: ChatRequest,
    private readonly dispatchedAt: number,
    /** The provider's stream told as chat chunks (Claude's); null: the provider's own chat stream. */
    private readonly translator: ChatStreamTranslator | null = null,
  ) {
    this.assembler = new ChatAssembler(call.deps.config.logMaxBytes);
  }

  event(message: { event?: string; data: string }, out: { write(text: string): void }): 'forward' | 'drop' {
    if (this.translator !== null) {
      // Anthropic's events are never passed on: what they say is, as chat chunks.
      for (const translated of this.translator.event(message)) {
        if (translated.chunk !== null) this.assembler.add(translated.chunk, performance.now());
        if (translated.text === DONE_EVENT) {
          this.done = true;
          if (this.call.params.requestBreakdown) out.write(this.breakdownEvent());
        }
        if (!translated.hidden) out.write(translated.text);
      }
      if (this.translator.error !== null) this.inBandError = this.translator.error.message;
      return 'drop';
    }
    if (message.data === '[DONE]') {
      this.done = true;
      if (this.call.params.requestBreakdown) out.write(this.breakdownEvent());
      return 'forward';
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(message.data);
    } catch {
      throw new AppError(502, 'upstream_invalid_response', 'The provider sent an event that is not JSON.');
    }
    if (!isObject(chunk))
      throw new AppError(502, 'upstream_invalid_response', 'The provider sent an event that is not an object.');
    if (isObject(chunk.error)) {
      this.inBandError = typeof chunk.error.message === 'string' ? chunk.error.message : 'The provider sent an error.';
      return 'forward';
    }
    this.assembler.add(chunk, performance.now());
    // The usage-only event (no choices) was asked for by gatelog, not the client: the client does not get it.
    const usageOnly = Array.isArray(chunk.choices) && chunk.choices.length === 0 && isObject(chunk.usage);
    return usageOnly && !this.request.clientWantsUsage ? 'drop' : 'forward';
  }

  /**
   * The answer's counts, once its usage arrived: a translated stream's from the provider's own events
   * (once its last one came), else the usage event's.
   */
  private usage(): TokenUsage | null {
    if (this.translator !== null) return this.translator.completed ? this.translator.usage : null;
    const usage = this.assembler.usage;
    return usage === null ? null : protocolOf(this.call.provider!.kind).usage(usage);
  }

  /** §15: the last event before [DONE], shaped so that the client's stream helpers are not misled. */
  private breakdownEvent(): string {
    const { assembler } = this;
    const head = { id: assembler.id, created: assembler.created, model: assembler.model ?? this.request.model };
    return breakdownChunk(head, this.breakdownNow());
  }

  private breakdownNow(): Json {
    const { log } = this.call;
    usageSoFar(this.call, log.model ?? this.request.model, this.usage());
    log.latency = seconds(this.dispatchedAt, performance.now());
    const choices = this.assembler.completion().choices as Json[];
    log.completion_message = choices.find((c) => c.index === 0)?.message ?? null;
    return { ...breakdownOf(this.call, this.request), stream: true };
  }

  /** [DONE] has been read (a Claude stream's: its message_stop, told as [DONE]). */
  complete(): boolean {
    return this.done;
  }

  get firstOutputAt(): number | null {
    return this.assembler.firstOutputAt;
  }

  fault(): string | null {
    if (this.inBandError !== null) return this.inBandError;
    const ended = this.translator !== null ? this.translator.completed : this.done || this.assembler.finished;
    return ended ? null : 'The provider ended its stream before its last event.';
  }

  async end(call: ProxiedCall, generationSeconds: number | null): Promise<StreamEnd> {
    const completion = this.assembler.completion();
    const usage = completeLog(call, this.request, completion, generationSeconds, this.usage());
    // Only a whole answer is kept: the stream ran to its end, and the log's copy holds all of its text.
    const whole = this.done && this.assembler.finished && !this.assembler.cut;
    return { usage, keep: whole ? () => JSON.stringify(completion) : undefined };
  }
}

/**
 * The call's log from the whole completion (the provider's JSON, or the stream put back together), and
 * what it used: the provider's counts, else the prompt's texts and the answer's to count.
 */
function completeLog(
  call: ProxiedCall,
  request: ChatRequest,
  completion: Json,
  generationSeconds: number | null,
  /** The answer's counts as the provider gave them; null: it gave none. */
  usage: TokenUsage | null,
): UsageReport {
  const { log } = call;
  if (typeof completion.model === 'string' && completion.model !== '')
    log.model = attemptedModel(completion.model) ?? log.model;
  const choices = Array.isArray(completion.choices) ? completion.choices.filter(isObject) : [];
  const first = choices.find((c) => c.index === 0) ?? choices[0];
  const message = first && isObject(first.message) ? first.message : null;
  log.output = completion;
  log.completion_message = message;
  log.tool_calls = message && Array.isArray(message.tool_calls) ? message.tool_calls : undefined;
  return {
    model: log.model ?? request.model,
    usage,
    texts: () => ({
      prompt: texts(request.messages.map((m) => m.content)),
      completion: texts(
        choices.flatMap((c) => {
          const m = isObject(c.message) ? c.message : {};
          return [m.content, m.refusal, m.tool_calls].filter((v) => v !== null && v !== undefined);
        }),
      ),
    }),
    generationSeconds,
  };
}

const texts = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v ?? '')));

function breakdownOf(call: ProxiedCall, request: ChatRequest): Json {
  const { log } = call;
  return {
    ...requestBreakdown(call, request.upstreamBody),
    prompt_messages: request.messages,
    completion_message: log.completion_message ?? null,
    stream: request.stream,
  };
}
