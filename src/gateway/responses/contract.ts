/**
 * The contracts of the Responses API routes for the OpenAPI document: OpenAI's create-response request
 * with the platform parameters beside it, a response, a deleted response and a page of input items.
 * parseResponsesRequest is what enforces the request (a refused call is logged before its 400, so the
 * route validates in its handler); every other field goes upstream as it is.
 */
import { z } from 'zod';
import { chatLikeFields } from '../core/json-call.js';
import { PlatformParamsSchema } from '../core/platform-params.js';
import { INPUT_ROLES } from './request.js';

export const ResponsesBody = z.looseObject({
  model: z.string().min(1).describe('The model, as the provider names it'),
  input: z
    .union([
      z.string(),
      z.array(
        z
          .looseObject({ type: z.string().optional(), role: z.enum(INPUT_ROLES).optional() })
          .describe('An input item: a message ({role, content}), a function call, its output, …'),
      ),
    ])
    .optional()
    .describe("The prompt: a text, or a list of input items in OpenAI's Responses format"),
  instructions: z.string().nullable().optional().describe('A system (developer) message before the input'),
  ...chatLikeFields('an event stream'),
  max_output_tokens: z.number().int().optional(),
  ...PlatformParamsSchema,
});

export const ResponseObject = z
  .looseObject({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number(),
    model: z.string(),
    status: z.string().optional(),
    output: z.array(z.unknown()),
    usage: z.looseObject({}).nullable().optional(),
    request_breakdown: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('POST with request_breakdown: true — the call as gatelog logged it'),
  })
  .describe(
    "The provider's response, unchanged. Streamed: text/event-stream of the provider's events (response.created " +
      '… response.completed), without data: [DONE]',
  );

export const DeletedResponse = z
  .looseObject({ id: z.string(), deleted: z.boolean() })
  .describe("The provider's answer, unchanged");

export const InputItemsPage = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(z.unknown()),
    first_id: z.string().nullable().optional(),
    last_id: z.string().nullable().optional(),
    has_more: z.boolean(),
  })
  .describe("The provider's page of the response's input items, unchanged");

/** The query of the routes on a stored response: the provider to ask; the rest goes to it as it is. */
export const StoredResponseQuery = z.looseObject({
  provider: z
    .string()
    .min(1)
    .optional()
    .describe('The registered provider (of kind openai) that stored the response; default openai'),
});

export const StoredResponseParams = z.object({
  response_id: z.string().min(1).describe("The response's id (resp_…)"),
});
