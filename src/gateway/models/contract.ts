/**
 * The contract of the model lists for the OpenAPI document (docs/api.md "Model lists"): OpenAI's list
 * (GET /api/models) and Anthropic's page (GET /api/anthropic/v1/models), each entry with gatelog's
 * `provider` and `pricing` beside the provider's own fields. The query of Anthropic's page is the
 * route's (http/model-lists.ts).
 */
import { z } from 'zod';

const price = (what: string) =>
  z.number().nullable().describe(`USD per million ${what}; null when the model has no price of its own for them`);

export const Pricing = z
  .object({
    input: price('input tokens'),
    output: price('output tokens'),
    cache_read: price("input tokens read from the provider's prompt cache"),
    cache_write: price("input tokens written to the provider's prompt cache (Anthropic's five-minute cache)"),
  })
  .describe('What a call of the model costs, as gatelog costs it; every price null when it knows none');

const gatelogFields = {
  provider: z.string().describe('The provider that serves the model (its name, as `provider/model` says it)'),
  pricing: Pricing,
};

export const OpenAIModel = z.object({
  id: z.string().describe('The name a call uses'),
  object: z.literal('model'),
  created: z.number().int().describe('Unix seconds: when its provider was registered'),
  owned_by: z.string().describe('The provider that serves it'),
  ...gatelogFields,
});

export const OpenAIModelList = z
  .object({ object: z.literal('list'), data: z.array(OpenAIModel) })
  .describe("OpenAI's list of models: every model this key may call");

export const AnthropicModel = z.object({
  type: z.literal('model'),
  id: z.string().describe('The name a call uses'),
  display_name: z.string().describe("The price catalog's name for the model, else its id"),
  created_at: z.string().describe('RFC 3339: when its provider was registered'),
  ...gatelogFields,
});

export const AnthropicModelPage = z
  .object({
    data: z.array(AnthropicModel),
    has_more: z.boolean().describe('More models lie beyond this page, in the direction asked'),
    first_id: z.string().nullable().describe('The first id of the page (before_id of the page before it)'),
    last_id: z.string().nullable().describe('The last id of the page (after_id of the page after it)'),
  })
  .describe("Anthropic's page of models: the models this key may call through providers of kind anthropic");
