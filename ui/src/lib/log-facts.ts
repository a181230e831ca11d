/**
 * A dataset log read for a reviewer (pure): its prompt as every message (system, earlier turns, tool
 * calls and results), its completion, and a cost that says "unknown" where gatelog had no price.
 */
import { costText } from './format.js';
import { shownMessage, type ShownMessage } from './messages.js';

const parse = (text: string | null): unknown => {
  if (text === null || text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};

const messagesOf = (list: unknown[]): ShownMessage[] | null => {
  const shown = list.map(shownMessage);
  return shown.length > 0 && shown.every((m) => m !== null) ? (shown as ShownMessage[]) : null;
};

/** Every message of a chat's input (a message list, or a request body holding `messages`); null if none. */
export function promptMessages(input: string | null): ShownMessage[] | null {
  const value = parse(input);
  if (Array.isArray(value)) return messagesOf(value);
  const messages = (value as { messages?: unknown } | null)?.messages;
  return Array.isArray(messages) ? messagesOf(messages) : null;
}

/** The completion message of a chat's output (a message, or a response's first choice); null if none. */
export function completionMessage(output: string | null): ShownMessage | null {
  const value = parse(output) as { role?: unknown; choices?: { message?: unknown }[] } | null;
  if (value === null || typeof value !== 'object') return null;
  if (typeof value.role === 'string') return shownMessage(value);
  const first = Array.isArray(value.choices) ? value.choices[0]?.message : undefined;
  return first ? shownMessage(first) : null;
}

/** JSON text indented for reading (tool arguments, results); any other text as it is. */
export function readableJson(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return text;
  }
}

/**
 * A log's cost to read (docs/api.md "Costs"): null when gatelog has no price for the model, never shown
 * as a price of $0; a failed call is not charged.
 */
export function costShown(log: { cost: number | null; status_code: number }): { text: string; note: string | null } {
  if (log.cost === null) return { text: 'unknown', note: 'gatelog has no price for this model.' };
  if (log.cost === 0 && log.status_code >= 400) return { text: 'none', note: 'A failed call is not charged.' };
  return { text: costText(log.cost), note: null };
}
