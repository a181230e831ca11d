/**
 * The log types that are calls to a model, as opposed to the spans of a trace (workflow, task, tool,
 * agent, …; src/logs/log-types.ts, docs/api.md "The log record"). Pure. A test
 * (test/ui/summary-units.pure.test.ts) keeps this list equal to the server's non-span types.
 */
export const MODEL_CALL_TYPES: readonly string[] = [
  'chat',
  'completion',
  'text',
  'response',
  'embedding',
  'transcription',
  'speech',
];
