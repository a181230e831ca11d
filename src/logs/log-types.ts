/** Log types and which type-specific fields each one carries (docs/api.md "The log record"). */

/** Types whose prompt_messages/completion_message are extracted from input/output. */
export const MESSAGE_LOG_TYPES = ['chat', 'completion', 'text', 'response'] as const;

/** Span types: they always carry the span fields. */
export const SPAN_LOG_TYPES = [
  'workflow',
  'task',
  'tool',
  'agent',
  'handoff',
  'guardrail',
  'function',
  'generation',
  'custom',
] as const;

export const LOG_TYPES = [...MESSAGE_LOG_TYPES, 'embedding', 'transcription', 'speech', ...SPAN_LOG_TYPES] as const;
export type LogType = (typeof LOG_TYPES)[number];

export const isMessageType = (t: string) => (MESSAGE_LOG_TYPES as readonly string[]).includes(t);
export const isSpanType = (t: string) => (SPAN_LOG_TYPES as readonly string[]).includes(t);
