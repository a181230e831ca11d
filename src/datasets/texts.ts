/**
 * The `prompt` and `completion` text of a dataset log, derived from its input and output when read
 * (docs/api.md "Dataset logs"): chat input → the last user message's text; embedding input → the
 * inputs joined by newlines; a transcription's output → its transcript; a Responses API response → its
 * output text; otherwise the text that the value holds. Derived on read, so copying logs into a
 * dataset stays one INSERT … SELECT.
 */
import { parseJsonText } from '../logs/json-text.js';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A message's content as text: a string, or the text parts of a content array. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        typeof part === 'string' ? part : isObject(part) && typeof part.text === 'string' ? part.text : '',
      )
      .filter(Boolean)
      .join('\n');
  }
  return '';
}

/** A chat message list: objects each with a role. */
export const isMessages = (v: unknown): v is Record<string, unknown>[] =>
  Array.isArray(v) && v.length > 0 && v.every((m) => isObject(m) && typeof m.role === 'string');

/** Embedding inputs: a text, or texts (token ids have no text). */
function inputsText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (Array.isArray(input) && input.every((i) => typeof i === 'string')) return input.join('\n');
  return '';
}

export function promptText(input: string | null): string {
  const value = parseJsonText(input);
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  const messages = isMessages(value) ? value : isObject(value) && isMessages(value.messages) ? value.messages : null;
  if (messages) {
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    return lastUser ? contentText(lastUser.content) : '';
  }
  if (Array.isArray(value)) return inputsText(value);
  if (isObject(value)) {
    if (value.input !== undefined) return inputsText(value.input);
    if (typeof value.prompt === 'string') return value.prompt;
  }
  return '';
}

export function completionText(output: string | null): string {
  const value = parseJsonText(output);
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (isObject(value)) {
    if (typeof value.text === 'string') return value.text;
    if (value.content !== undefined) return contentText(value.content);
    const choices = value.choices;
    if (Array.isArray(choices) && isObject(choices[0]) && isObject(choices[0].message)) {
      return contentText(choices[0].message.content);
    }
    if (value.object === 'response' && Array.isArray(value.output)) return responseText(value.output);
  }
  return '';
}

/** A Responses API response's output text: its messages' text parts, joined as OpenAI's output_text is. */
function responseText(output: unknown[]): string {
  return output
    .flatMap((item) => (isObject(item) && item.type === 'message' && Array.isArray(item.content) ? item.content : []))
    .map((part) => (isObject(part) && part.type === 'output_text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}
