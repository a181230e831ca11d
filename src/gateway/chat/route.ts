/**
 * POST /api/chat/completions as a proxied route (the core runs it, core/lifecycle.ts; docs/api.md "Chat completions").
 * Not streamed, the provider's JSON goes back unchanged and is read for the log. Streamed, each event
 * goes back as it arrives (stream-pipeline.ts) while ChatAssembler rebuilds the completion for the log;
 * the usage event, always asked for upstream, is held back when the client did not ask for it, and
 * request_breakdown is one last event before [DONE].
 */
import { replayedAnswer } from '../core/replayed-answer.js';
import { outputLimit, promptTexts } from '../core/demand.js';
import { type ChatRequest, parseChatRequest } from './request.js';
import { replayAsStream } from './replay.js';
import type { ProviderChoice } from '../../providers/choose-provider.js';
import type { ChatTranslation } from '../../providers/chat-translation.js';
import { chatUsageOf } from '../../providers/openai/usage.js';
import { loggedCount } from '../../providers/usage.js';
import { upstreamObject } from '../core/answers.js';
import type { ProxiedRoute } from '../core/contract.js';
import { jsonAnswer, jsonCall, logSampling, takeJsonBody } from '../core/json-call.js';
import { reportUsage } from '../core/usage.js';
import { breakdownChunk, breakdownOf, completeLog } from './log.js';
import { ChatStreamReader } from './stream-reader.js';

export const UPSTREAM_PATH = '/chat/completions';

type Json = Record<string, unknown>;

export interface PreparedChat {
  request: ChatRequest;
}

/**
 * How the chat call goes to the provider serving it: translated to another of its APIs (Claude), or
 * null — the provider speaks OpenAI's.
 */
const translationOf = (provider: ProviderChoice | null): ChatTranslation | null =>
  provider === null ? null : (provider.definition.protocol.chat ?? null);

export const chatRoute: ProxiedRoute<PreparedChat> = {
  logType: 'chat',
  providerRoute: 'chat',
  model: ({ request }) => request.model,

  async prepare(call, body) {
    const fields = takeJsonBody(call, body);
    const { log } = call;
    if (Array.isArray(fields.messages)) log.prompt_messages = fields.messages;
    const request = parseChatRequest(fields);
    log.model = request.model;
    log.stream = request.stream;
    logSampling(log, fields);
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
    return jsonCall(UPSTREAM_PATH, request, model);
  },

  streams: ({ request }) => request.stream,

  demand: ({ request }) => ({
    prompt: promptTexts([...request.messages.map((m) => m.content), request.upstreamBody.tools]),
    maxOutputTokens: outputLimit(request.upstreamBody.max_completion_tokens, request.upstreamBody.max_tokens),
  }),

  async answer({ request }, upstream, call) {
    const parsed: Json = upstreamObject(upstream.body);
    const translation = translationOf(call.provider);
    const breakdown = () => breakdownOf(call, request);
    if (translation === null) {
      await reportUsage(
        call,
        completeLog(call, request, parsed, null, call.provider!.definition.protocol.usage(parsed.usage)),
      );
      return jsonAnswer(call, upstream, parsed, breakdown, () => upstream.body.toString('utf8'));
    }
    // The provider's answer, told as a chat completion; priced by the provider's own counts.
    const { completion, usage } = translation.answer(parsed);
    const body = JSON.stringify(completion);
    await reportUsage(call, completeLog(call, request, completion, null, usage));
    return jsonAnswer(call, { contentType: 'application/json', body }, completion, breakdown, () => body);
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
    replay: ({ request }, stored, call) =>
      replayedAnswer(call, request.stream, stored, {
        // A stored answer is a chat completion whichever provider gave it: OpenAI's usage.
        usage: (completion) => completeLog(call, request, completion, null, chatUsageOf(completion.usage)),
        breakdown: () => breakdownOf(call, request),
        asStream: (completion, last) => replayAsStream(completion, { usage: request.clientWantsUsage, last }),
        breakdownEvent: breakdownChunk,
      }),
  },
};
