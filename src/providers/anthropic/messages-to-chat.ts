/**
 * A Claude answer (Anthropic's message JSON) as the `chat.completion` an OpenAI client expects: one
 * choice whose content is the text blocks joined, whose tool_calls are the tool_use blocks (arguments
 * as JSON text), and whose reasoning is kept beside them — `reasoning_content` (the thinking text) and
 * `thinking_blocks` (each block with its signature, which a client must send back with a later turn
 * that continues tool use under extended thinking; chat-to-messages.ts reads them there).
 */
import { AppError } from '../../errors.js';
import type { TokenUsage } from '../usage.js';
import { chatCounts, openAIUsage, usageOf } from './usage.js';

type Json = Record<string, unknown>;

export interface TranslatedMessage {
  completion: Json;
  /** The counts the call is priced by, as the completion reports them (with the one-hour cache writes it cannot). */
  usage: TokenUsage;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Anthropic's stop_reason → OpenAI's finish_reason. `pause_turn` (a server tool's long turn, paused to
 * be continued by sending it back) ends this answer as a stop; `refusal` is what OpenAI calls a content
 * filter; a context window filled is a length stop. Anything newer → "stop".
 */
export function finishReasonOf(stopReason: unknown): string {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** A thinking block as a client sends it back: kept whole, signature included. */
export function thinkingBlockOf(block: Json): Json | null {
  if (block.type === 'thinking') return { type: 'thinking', thinking: block.thinking, signature: block.signature };
  if (block.type === 'redacted_thinking') return { type: 'redacted_thinking', data: block.data };
  return null;
}

/** `now`: epoch ms, for `created` (Anthropic's message has no time of its own). */
export function messageToChat(message: unknown, now = Date.now()): TranslatedMessage {
  if (!isObject(message) || !Array.isArray(message.content)) {
    throw new AppError(502, 'upstream_invalid_response', 'The provider answered with a body that is not a message.');
  }
  const texts: string[] = [];
  const thinking: string[] = [];
  const thinkingBlocks: Json[] = [];
  const toolCalls: Json[] = [];
  for (const block of message.content) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    } else {
      const kept = thinkingBlockOf(block);
      if (kept === null) continue; // server tools' blocks: no place in a chat completion
      thinkingBlocks.push(kept);
      if (typeof block.thinking === 'string') thinking.push(block.thinking);
    }
  }
  const reply: Json = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    refusal: null,
  };
  if (toolCalls.length > 0) reply.tool_calls = toolCalls;
  if (thinkingBlocks.length > 0) {
    reply.reasoning_content = thinking.join('');
    reply.thinking_blocks = thinkingBlocks;
  }
  const usage = chatCounts(usageOf(message.usage));
  return {
    completion: {
      id: message.id,
      object: 'chat.completion',
      created: Math.floor(now / 1000),
      model: message.model,
      choices: [{ index: 0, message: reply, logprobs: null, finish_reason: finishReasonOf(message.stop_reason) }],
      usage: openAIUsage(usage),
    },
    usage,
  };
}
