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

/** A metadata value's text form: strings as they are, anything else as JSON text (1 → "1"). */
export function metadataText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A metadata value as a number, when it is one (a JSON number or a numeric string). */
export function metadataNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) return Number(value);
  return null;
}
