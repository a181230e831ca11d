/** The logging API's input (docs/api.md "Logging API") mapped to LogFields: aliases resolved, times parsed. */
import { parseIsoTime } from '../../util/iso-time.js';
import type { LogInput } from './ingest-schema.js';
import type { LogFields } from './new-log.js';

export function fieldsFromInput(input: LogInput): LogFields {
  const {
    usage,
    generation_time,
    ttft,
    timestamp,
    start_time,
    prompt_tokens,
    completion_tokens,
    latency,
    time_to_first_token,
    ...rest
  } = input;
  return {
    ...rest,
    log_method: 'logging_api',
    prompt_tokens: prompt_tokens ?? usage?.prompt_tokens,
    completion_tokens: completion_tokens ?? usage?.completion_tokens,
    latency: latency ?? generation_time,
    time_to_first_token: time_to_first_token !== undefined ? time_to_first_token : ttft,
    timestamp: timestamp === undefined ? undefined : (parseIsoTime(timestamp) ?? undefined),
    start_time: start_time === undefined ? undefined : (parseIsoTime(start_time) ?? undefined),
  };
}
