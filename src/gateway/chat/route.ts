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
import { loggedCount, loggedUsage, type TokenUsage } from '../../providers/usage.js';
import { upstreamObject } from '../core/answers.js';
import type { ProxiedCall, ProxiedRoute } from '../core/contract.js';
import { requestBreakdown, seconds } from '../core/record.js';
import { storeInCache } from '../core/call-cache.js';
import type { StreamOutcome, StreamReader } from '../core/contract.js';

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
    if (translation !== null) {
      // The provider's answer, told as a chat completion; priced by the provider's own counts.
      const translated = translation.answer(parsed);
      parsed = translated.completion;
      const body = JSON.stringify(parsed);
      await completeLog(call, request, parsed, null, translated.usage);
      storeInCache(call, () => body);
      if (!call.params.requestBreakdown) return { status: 200, contentType: 'application/json', body };
    } else {
      await completeLog(call, request, parsed, null, protocolOf(call.provider!.kind).usage(parsed.usage));
      storeInCache(call, () => upstream.body.toString('utf8'));
      if (!call.params.requestBreakdown) {
        return { status: 200, contentType: upstream.contentType, body: upstream.body };
      }
    }
    const withBreakdown = { ...parsed, request_breakdown: breakdownOf(call, request) };
    return { status: 200, contentType: 'application/json', body: JSON.stringify(withBreakdown) };
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
      await completeLog(call, request, completion, null, chatUsageOf(completion.usage));
      // The lifecycle logs a hit at cost 0.
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
    const read = this.usage();
    const usage = read === null ? null : loggedUsage(read);
    log.prompt_tokens = usage?.input ?? log.prompt_tokens;
    log.completion_tokens = usage?.output ?? log.completion_tokens;
    log.latency = seconds(this.dispatchedAt, performance.now());
    log.cost = costOf(this.call, usage, log.model ?? this.request.model, usage?.input ?? 0, usage?.output ?? 0);
    const choices = this.assembler.completion().choices as Json[];
    log.completion_message = choices.find((c) => c.index === 0)?.message ?? null;
    return { ...breakdownOf(this.call, this.request), stream: true };
  }

  /** [DONE] has been read (a Claude stream's: its message_stop, told as [DONE]). */
  complete(): boolean {
    return this.done;
  }

  async end(outcome: StreamOutcome): Promise<void> {
    const { log } = this.call;
    const now = outcome.at;
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
    } else if (this.translator !== null && !this.translator.completed) {
      log.status_code = 502;
      log.error_message = 'The provider ended its stream before its last event.';
    } else if (!this.done && !this.assembler.finished) {
      log.status_code = 502;
      log.error_message = 'The provider ended its stream before its last event.';
    }
    log.latency = seconds(this.dispatchedAt, now);
    const completion = this.assembler.completion();
    const generating = first === null ? null : seconds(first, now);
    await completeLog(this.call, this.request, completion, generating, this.usage());
    // Only a whole answer is kept: the stream ran to its end, and the log's copy holds all of its text.
    if ((log.status_code ?? 200) < 400 && this.done && this.assembler.finished && !this.assembler.cut) {
      storeInCache(this.call, () => JSON.stringify(completion));
    }
  }
}

/** The call's log from the whole completion (the provider's JSON, or the stream put back together). */
async function completeLog(
  call: ProxiedCall,
  request: ChatRequest,
  completion: Json,
  generationSeconds: number | null,
  /** The answer's counts as the provider gave them; null: it gave none. */
  read: TokenUsage | null,
): Promise<void> {
  const { log } = call;
  if (typeof completion.model === 'string' && completion.model !== '')
    log.model = attemptedModel(completion.model) ?? log.model;
  const choices = Array.isArray(completion.choices) ? completion.choices.filter(isObject) : [];
  const first = choices.find((c) => c.index === 0) ?? choices[0];
  const message = first && isObject(first.message) ? first.message : null;
  log.output = completion;
  log.completion_message = message;
  log.tool_calls = message && Array.isArray(message.tool_calls) ? message.tool_calls : undefined;
  const usage = read === null ? null : loggedUsage(read);
  let prompt = usage?.input;
  let completionTokens = usage?.output;
  if (prompt === undefined || completionTokens === undefined) {
    // No usage from the provider (a stream cut short, a server that does not count): counted here.
    const estimate = await estimateTokens(call, request, choices);
    prompt ??= estimate.prompt;
    completionTokens ??= estimate.completion;
    call.params.metadata = { ...call.params.metadata, usage_source: 'estimated' };
  }
  log.prompt_tokens = prompt;
  log.completion_tokens = completionTokens;
  // A failed call (cut off, the client gone) costs 0 in its log, as every failed call does.
  log.cost =
    (log.status_code ?? 200) < 400
      ? costOf(call, usage, log.model ?? request.model, prompt, completionTokens)
      : undefined;
  const generating = generationSeconds ?? log.latency ?? 0;
  if (generating > 0 && completionTokens > 0) log.tokens_per_second = completionTokens / generating;
}

/** USD from the catalog, cache reads and writes each at its own price; undefined when the model has no price. */
function costOf(
  call: ProxiedCall,
  usage: TokenUsage | null,
  model: string,
  promptTokens: number,
  completionTokens: number,
): number | undefined {
  return (
    call.deps.prices.cost({
      model,
      providerId: call.provider?.name ?? 'openai',
      promptTokens,
      completionTokens,
      cachedTokens: usage?.cacheRead ?? 0,
      // Claude's writes to its prompt cache, those for an hour apart, each at its own price.
      cacheWriteTokens: usage?.cacheWrite ?? 0,
      cacheWrite1hTokens: usage?.cacheWrite1h ?? 0,
    }) ?? undefined
  ); // unknown: the log marks it (new-log.ts)
}

/** Local token counts: the prompt's texts and the completion's, with gpt-tokenizer on a worker thread. */
async function estimateTokens(
  call: ProxiedCall,
  request: ChatRequest,
  choices: Json[],
): Promise<{ prompt: number; completion: number }> {
  const texts = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v ?? '')));
  const promptTexts = texts(request.messages.map((m) => m.content));
  const completionTexts = texts(
    choices.flatMap((c) => {
      const message = isObject(c.message) ? c.message : {};
      return [message.content, message.refusal, message.tool_calls].filter((v) => v !== null && v !== undefined);
    }),
  );
  const limits = { perText: Number.POSITIVE_INFINITY, total: Number.POSITIVE_INFINITY, countAll: true };
  try {
    const [prompt, completion] = await Promise.all([
      call.deps.tokens.measure(promptTexts, limits),
      call.deps.tokens.measure(completionTexts, limits),
    ]);
    return { prompt: prompt.total ?? 0, completion: completion.total ?? 0 };
  } catch {
    return { prompt: 0, completion: 0 };
  }
}

function breakdownOf(call: ProxiedCall, request: ChatRequest): Json {
  const { log } = call;
  return {
    ...requestBreakdown(call, request.upstreamBody),
    prompt_messages: request.messages,
    completion_message: log.completion_message ?? null,
    stream: request.stream,
  };
}
