/** JSON text helpers for the columns that hold JSON (input, output, tools, metadata …). */

/**
 * The log fields stored as JSON text: unbounded in size (lists read previews of them), and the only
 * text that may hold a NUL character (JSON escapes it).
 */
export const JSON_TEXT_COLUMNS = [
  'input',
  'output',
  'prompt_messages',
  'completion_message',
  'tools',
  'tool_calls',
  'tool_choice',
] as const;

/**
 * The JSON text to store for a value. A string that already holds a JSON object or array is taken as
 * the serialized form the caller was asked for; any other value is serialized.
 */
export function toJsonText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      try {
        JSON.parse(trimmed);
        return value;
      } catch {
        // not JSON: stored as a JSON string below
      }
    }
  }
  return JSON.stringify(value);
}

export function parseJsonText(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
