/** The logging API's input (docs/api.md "Logging API") mapped to LogFields: aliases resolved, times parsed. */
import { parseIsoTime } from '../../util/iso-time.js';
import type { LogInput } from './ingest-schema.js';
import type { LogFields } from './new-log.js';

export function fieldsFromInput(input: LogInput): LogFields {
  // A spread of the whole input with the aliased fields written over, not a rest destructuring: the
  // rest's copy that leaves keys out took most of this function's time (a 1,000-log batch runs it 1,000
  // times on the event loop). The aliases themselves stay as unread properties.
  const { usage, generation_time, ttft, timestamp, start_time } = input;
  return {
    ...input,
    log_method: 'logging_api',
    prompt_tokens: input.prompt_tokens ?? usage?.prompt_tokens,
    completion_tokens: input.completion_tokens ?? usage?.completion_tokens,
    latency: input.latency ?? generation_time,
    time_to_first_token: input.time_to_first_token !== undefined ? input.time_to_first_token : ttft,
    timestamp: timestamp === undefined ? undefined : (parseIsoTime(timestamp) ?? undefined),
    start_time: start_time === undefined ? undefined : (parseIsoTime(start_time) ?? undefined),
  };
}
