/**
 * What the logging API accepts for one log (CONTRACT §5). Unknown fields are ignored; server-owned
 * fields (is_test, organization_key__name, organization, user, log_method, id, unique_id, status, failed)
 * are dropped here because they are simply not in the schema.
 */
import { z } from 'zod';
import { LOG_TYPES } from './log-types.js';

const nonNegative = z.number().finite().nonnegative();
const nonNegativeInt = z.number().int().nonnegative();
const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d\d-\d\d/.test(s), {
  message: 'must be an ISO 8601 datetime',
});
const optionalText = z.string().nullish();

const Message = z.looseObject({ role: z.string(), content: z.unknown().optional() });

export const LogInput = z.object({
  log_type: z.enum(LOG_TYPES).optional(),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  prompt_messages: z.array(Message).nullish(),
  completion_message: Message.nullish(),
  prompt_tokens: nonNegativeInt.optional(),
  completion_tokens: nonNegativeInt.optional(),
  usage: z
    .looseObject({ prompt_tokens: nonNegativeInt.optional(), completion_tokens: nonNegativeInt.optional() })
    .optional(),
  cost: nonNegative.optional(),
  latency: nonNegative.optional(),
  generation_time: nonNegative.optional(),
  time_to_first_token: nonNegative.nullish(),
  ttft: nonNegative.nullish(),
  tokens_per_second: nonNegative.optional(),
  routing_time: nonNegative.optional(),
  model: z.string().optional(),
  foundation_model: z.string().optional(),
  provider_id: z.string().optional(),
  deployment_name: optionalText,
  customer_identifier: z.string().max(120, 'must be at most 120 characters').optional(),
  customer_email: z.string().optional(),
  thread_identifier: optionalText,
  custom_identifier: optionalText,
  trace_unique_id: optionalText,
  span_unique_id: optionalText,
  span_parent_id: optionalText,
  span_name: optionalText,
  span_workflow_name: optionalText,
  prompt_id: optionalText,
  temperature: z.number().finite().nullish(),
  max_tokens: nonNegativeInt.nullish(),
  stream: z.boolean().optional(),
  is_example: z.boolean().optional(),
  used_custom_credential: z.boolean().optional(),
  tool_choice: z.unknown().optional(),
  tools: z.unknown().optional(),
  tool_calls: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown(), { error: 'must be an object' }).nullish(),
  environment: z.string().min(1).max(120).optional(),
  status_code: z.number().int().min(100).max(599).optional(),
  error_message: optionalText,
  timestamp: isoDate.optional(),
  start_time: isoDate.optional(),
  embedding_dimensions: nonNegativeInt.nullish(),
  embedding_count: nonNegativeInt.nullish(),
  audio_duration: nonNegative.nullish(),
  transcript: optionalText,
});
export type LogInput = z.infer<typeof LogInput>;
