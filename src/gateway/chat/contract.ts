/**
 * The contract of POST /api/chat/completions for the OpenAPI document: OpenAI's chat-completions request
 * with the platform parameters beside it, and its answer. parseChatRequest is what enforces the request
 * (a refused call is logged before its 400, so the route validates in its handler); every other field
 * goes upstream as it is.
 */
import { z } from 'zod';
import { MAX_CHOICES, MESSAGE_ROLES } from './request.js';
import { chatLikeFields } from '../core/json-call.js';
import { PlatformParamsSchema } from '../core/platform-params.js';

export const ChatBody = z.looseObject({
  model: z.string().min(1).describe('The model, as the provider names it'),
  messages: z
    .array(z.looseObject({ role: z.enum(MESSAGE_ROLES), content: z.unknown().optional() }))
    .min(1)
    .describe("The conversation, in OpenAI's message format"),
  ...chatLikeFields('an event stream'),
  stream_options: z
    .looseObject({ include_usage: z.boolean().optional() })
    .optional()
    .describe('With stream only; usage is always asked of the provider, and passed on when asked for here'),
  n: z.number().int().min(1).max(MAX_CHOICES).optional(),
  max_tokens: z.number().int().optional(),
  max_completion_tokens: z.number().int().optional(),
  ...PlatformParamsSchema,
});

const Message = z.looseObject({
  role: z.string(),
  content: z.string().nullable(),
  refusal: z.string().nullable().optional(),
  tool_calls: z.array(z.unknown()).optional(),
});

export const ChatAnswer = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({ index: z.number().int(), message: Message, finish_reason: z.string().nullable() }),
    ),
    usage: z.looseObject({}).optional(),
    request_breakdown: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('With request_breakdown: true — the call as gatelog logged it'),
  })
  .describe(
    "Not streamed: the provider's answer unchanged. Streamed: text/event-stream of chat.completion.chunk events, " +
      'then data: [DONE]',
  );
