/**
 * What the fake upstream (fake-upstream.ts) answers to /chat/completions, as a script says: the whole
 * chat completion, or the events of its stream, as OpenAI writes them.
 */
import type { StreamPacing } from './sse.js';

/** One choice of a scripted chat answer; each array element is one streamed event's piece. */
export interface ChatChoiceScript {
  content?: string[];
  refusal?: string[];
  /** A name given as pieces is streamed as the first in the call's head, then one delta per piece. */
  toolCalls?: { id: string; name: string | string[]; arguments: string[] }[];
  /** Default: 'tool_calls' when the choice calls tools, else 'stop'. */
  finishReason?: string;
}

export interface ChatUsageScript {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

/** What /chat/completions answers (JSON or streamed) until the next `chat()` call. */
export interface ChatScript extends StreamPacing {
  choices?: ChatChoiceScript[];
  /** null: no usage at all, not even when the stream was asked for it (as some compatible servers do). */
  usage?: ChatUsageScript | null;
  /** The model the answer names; default: the request's. */
  model?: string;
}

export const DEFAULT_CHAT_CONTENT = ['Hello', ', ', 'world', '!'];
export const DEFAULT_CHAT_USAGE: ChatUsageScript = { prompt_tokens: 19, completion_tokens: 4 };

function usageObject(usage: ChatUsageScript) {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoning_tokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function finishReasonOf(choice: ChatChoiceScript): string {
  return choice.finishReason ?? (choice.toolCalls?.length ? 'tool_calls' : 'stop');
}

function chatChoices(script: ChatScript): ChatChoiceScript[] {
  return script.choices ?? [{ content: DEFAULT_CHAT_CONTENT }];
}

/** The whole answer, as the provider sends it when not streaming. */
export function chatCompletionFor(script: ChatScript, requestModel: string, id: string, created: number) {
  const usage = script.usage === undefined ? DEFAULT_CHAT_USAGE : script.usage;
  return {
    id,
    object: 'chat.completion',
    created,
    model: script.model ?? requestModel,
    choices: chatChoices(script).map((choice, index) => {
      const message: Record<string, unknown> = {
        role: 'assistant',
        content: choice.content ? choice.content.join('') : null,
        refusal: choice.refusal ? choice.refusal.join('') : null,
        annotations: [],
      };
      if (choice.toolCalls?.length) {
        message.tool_calls = choice.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: [call.name].flat().join(''), arguments: call.arguments.join('') },
        }));
      }
      return { index, message, logprobs: null, finish_reason: finishReasonOf(choice) };
    }),
    usage: usage === null ? undefined : usageObject(usage),
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

/**
 * The events of a streamed answer (JSON texts, [DONE] not included), as the provider orders them: per
 * choice a first delta with the role, then its pieces (tool calls interleaved by index: each call's
 * head, then their argument pieces in turn), then its finish_reason; choices interleaved in turn; then
 * the usage-only event when asked for.
 */
export function chatChunksFor(
  script: ChatScript,
  requestModel: string,
  id: string,
  created: number,
  includeUsage: boolean,
): string[] {
  const usage = script.usage === undefined ? DEFAULT_CHAT_USAGE : script.usage;
  const withUsage = includeUsage && usage !== null;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model: script.model ?? requestModel,
      service_tier: 'default',
      system_fingerprint: 'fp_fake',
      choices,
      // The provider sends usage: null on every chunk but the last when usage was asked for.
      ...(withUsage ? { usage: null } : {}),
      ...extra,
    });
  const perChoice = chatChoices(script).map((choice, index) => {
    const deltas: Record<string, unknown>[] = [{ role: 'assistant', content: '', refusal: null }];
    if (choice.refusal) {
      deltas[0] = { role: 'assistant', content: null, refusal: '' };
      for (const piece of choice.refusal) deltas.push({ refusal: piece });
    }
    for (const piece of choice.content ?? []) deltas.push({ content: piece });
    const calls = choice.toolCalls ?? [];
    if (calls.length > 0) deltas[0] = { role: 'assistant', content: null, refusal: null };
    calls.forEach((call, at) => {
      const [head, ...rest] = [call.name].flat();
      deltas.push({
        tool_calls: [{ index: at, id: call.id, type: 'function', function: { name: head ?? '', arguments: '' } }],
      });
      for (const piece of rest) deltas.push({ tool_calls: [{ index: at, function: { name: piece } }] });
    });
    const longest = Math.max(0, ...calls.map((call) => call.arguments.length));
    for (let piece = 0; piece < longest; piece++) {
      calls.forEach((call, at) => {
        if (piece < call.arguments.length)
          deltas.push({ tool_calls: [{ index: at, function: { arguments: call.arguments[piece] } }] });
      });
    }
    const events = deltas.map((delta) => chunk([{ index, delta, logprobs: null, finish_reason: null }]));
    events.push(chunk([{ index, delta: {}, logprobs: null, finish_reason: finishReasonOf(choice) }]));
    return events;
  });
  const events: string[] = [];
  const longest = Math.max(...perChoice.map((list) => list.length));
  for (let at = 0; at < longest; at++) {
    for (const list of perChoice) if (at < list.length) events.push(list[at]);
  }
  if (withUsage) events.push(chunk([], { usage: usageObject(usage) }));
  return events;
}
