/**
 * What the logging API accepts for one log (docs/api.md "Logging API"). Unknown fields are ignored; server-owned
 * fields (is_test, organization_key__name, organization, user, log_method, id, unique_id, status, failed)
 * are dropped here because they are simply not in the schema.
 */
import { z } from 'zod';
import { parseIsoTime } from '../../util/iso-time.js';
import { identifierFields } from '../log-item.js';
import { LOG_TYPES } from '../log-types.js';
import { LOG_LIMITS, seconds, tokenCount, tokenTotalIssue, usd } from '../log-limits.js';

const nonNegativeInt = tokenCount;
const isoDate = z.string().refine((s) => parseIsoTime(s) !== null, {
  message: 'must be an ISO 8601 datetime',
});
const optionalText = z.string().nullish();
/** A code names a reason (`rate_limited`, a provider's `context_length_exceeded`): short, as the list shows it. */
export const ERROR_CODE_MAX_CHARS = 100;

const Message = z.looseObject({ role: z.string(), content: z.unknown().optional() });

export const LogInput = z
  .object({
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
    cost: usd.optional(),
    latency: seconds.optional(),
    generation_time: seconds.optional(),
    time_to_first_token: seconds.nullish(),
    ttft: seconds.nullish(),
    tokens_per_second: z.number().finite().nonnegative().max(LOG_LIMITS.tokensPerSecond).optional(),
    routing_time: seconds.optional(),
    model: z.string().optional(),
    foundation_model: z.string().optional(),
    provider_id: z.string().optional(),
    deployment_name: optionalText,
    customer_identifier: z.string().max(120, 'must be at most 120 characters').optional(),
    customer_email: z.string().optional(),
    ...identifierFields(optionalText),
    temperature: z.number().finite().min(-1e6).max(1e6).nullish(),
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
    error_code: z.string().max(ERROR_CODE_MAX_CHARS, `must be at most ${ERROR_CODE_MAX_CHARS} characters`).nullish(),
    timestamp: isoDate.optional(),
    start_time: isoDate.optional(),
    embedding_dimensions: nonNegativeInt.nullish(),
    embedding_count: nonNegativeInt.nullish(),
    audio_duration: seconds.nullish(),
    transcript: optionalText,
  })
  .superRefine((log, ctx) => {
    // As fieldsFromInput reads them: the top-level counts first, else usage's.
    const prompt = log.prompt_tokens ?? log.usage?.prompt_tokens;
    const completion = log.completion_tokens ?? log.usage?.completion_tokens;
    const path =
      log.completion_tokens !== undefined || log.usage === undefined
        ? ['completion_tokens']
        : ['usage', 'completion_tokens'];
    const issue = tokenTotalIssue(prompt, completion, path);
    if (issue) ctx.addIssue(issue);
  });
export type LogInput = z.infer<typeof LogInput>;
