/**
 * The contract of POST /api/anthropic/v1/messages for the OpenAPI document: Anthropic's Messages request
 * with the platform parameters beside it, and Anthropic's answer. parseMessagesRequest is what enforces
 * the request (a refused call is logged before its 400, so the route validates in its handler); every
 * other field goes upstream as it is.
 */
import { z } from 'zod';
import { chatLikeFields } from '../core/json-call.js';
import { PlatformParamsSchema } from '../core/platform-params.js';

export const MessagesBody = z.looseObject({
  model: z.string().min(1).describe('The Claude model, as Anthropic names it (or `provider/model`)'),
  messages: z
    .array(z.looseObject({ role: z.string(), content: z.unknown() }))
    .min(1)
    .describe("The conversation, in Anthropic's message format"),
  system: z.unknown().optional().describe('The system prompt: a text or a list of text blocks'),
  max_tokens: z.number().int().optional(),
  ...chatLikeFields("Anthropic's event stream"),
  ...PlatformParamsSchema,
  metadata: PlatformParamsSchema.metadata.describe(
    "Stored on the call's log; its user_id also goes to Anthropic as Anthropic's metadata.user_id",
  ),
});

export const MessagesAnswer = z
  .looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(z.looseObject({ type: z.string() })),
    stop_reason: z.string().nullable(),
    usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
    request_breakdown: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('With request_breakdown: true — the call as gatelog logged it'),
  })
  .describe(
    "Not streamed: Anthropic's message unchanged. Streamed: text/event-stream of Anthropic's events, " +
      'message_start to message_stop',
  );

export const CountTokensBody = z.looseObject({
  model: z.string().min(1).describe('The Claude model, as Anthropic names it (or `provider/model`)'),
  messages: z.array(z.unknown()).optional().describe("The conversation to count, in Anthropic's message format"),
  system: z.unknown().optional(),
  tools: z.array(z.unknown()).optional(),
});

export const CountTokensAnswer = z
  .looseObject({ input_tokens: z.number().int() })
  .describe("Anthropic's count, unchanged");
