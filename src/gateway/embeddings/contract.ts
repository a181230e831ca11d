/**
 * The contract of POST /api/embeddings for the OpenAPI document: OpenAI's embeddings request with the
 * platform parameters beside it, and OpenAI's answer (the test suite also checks answers against
 * OpenAI's own published schema). parseEmbeddingsRequest is what enforces the request: a refused
 * call must be logged before its 400, so the route validates in its handler.
 */
import { z } from 'zod';
import { EMBEDDING_MODELS, MAX_INPUTS, MAX_TOKENS_PER_INPUT, MAX_TOKENS_PER_REQUEST } from './request.js';
import { PlatformParamsSchema } from '../core/platform-params.js';

const models = [...EMBEDDING_MODELS.keys()];

export const EmbeddingsBody = z.looseObject({
  model: z
    .string()
    .describe(
      `One of ${models.join(', ')} on OpenAI's API; any model the server serves when the provider key ` +
        'was registered with a base_url of another server',
    ),
  input: z
    .union([z.string(), z.array(z.string()), z.array(z.number().int()), z.array(z.array(z.number().int()))])
    .describe(
      `A text, up to ${MAX_INPUTS} texts, or token ids; at most ${MAX_TOKENS_PER_INPUT} tokens per input ` +
        `and ${MAX_TOKENS_PER_REQUEST} in all`,
    ),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).optional().describe('text-embedding-3 models only'),
  user: z.string().optional(),
  ...PlatformParamsSchema,
});

export const EmbeddingsAnswer = z.looseObject({
  object: z.literal('list'),
  data: z.array(
    z.looseObject({
      object: z.literal('embedding'),
      index: z.number().int(),
      embedding: z.union([z.array(z.number()), z.string()]).describe('Numbers, or base64 of float32s'),
    }),
  ),
  model: z.string(),
  usage: z.looseObject({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
  request_breakdown: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('With request_breakdown=true: the call as gatelog logged it (docs/api.md "Platform parameters")'),
});
