/**
 * A log's input and output read at a glance (docs/api.md "The log record": `input_preview`,
 * `output_preview`): what a person wrote and what the model answered, as one short line each, never the
 * provider's JSON. The input is the last user message (a text part of a content list, an image named
 * `[image]`), a prompt, an embedding call's texts, an audio file; the output is the assistant's text or
 * its tool calls (`tool: name(args…)`), a refusal, a transcript, "N inputs × D dims", an error's message.
 * Values of no known shape are shown as compact JSON: a span's input is what its code was given.
 *
 * Computed once when a log is built (src/logs/write/new-log.ts), from the whole values, and stored:
 * a list reads only the first characters of each body, too few to find a long conversation's last
 * message. Logs stored before the preview columns get theirs when read, from what the list read.
 */

/** Characters a preview keeps (the table shows a line of it; the rest is in the log). */
export const PREVIEW_CHARS = 300;

/** Text longer than this holding JSON is not parsed for a preview (its first characters are shown). */
const PARSE_LIMIT_CHARS = 1024 * 1024;

/** What a log's previews are read from: its values as given (parsed JSON, or JSON text). */
export interface PreviewSource {
  logType: string;
  input: unknown;
  output: unknown;
  promptMessages?: unknown;
  completionMessage?: unknown;
  toolCalls?: unknown;
  transcript?: string | null;
  embeddingCount?: number | null;
  embeddingDimensions?: number | null;
  audioDuration?: number | null;
  errorMessage?: string | null;
}

export interface Previews {
  input: string | null;
  output: string | null;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const present = (v: unknown) => v !== null && v !== undefined;

/** One line, whitespace collapsed, at most PREVIEW_CHARS characters (an ellipsis says it was cut). */
export function oneLine(text: string, max = PREVIEW_CHARS): string {
  // Collapsed on a bounded slice: a 20 MB text is not rewritten whole for 300 characters.
  const shown = text
    .slice(0, max * 4)
    .replace(/\s+/g, ' ')
    .trim();
  return shown.length > max || text.length > max * 4 ? `${shown.slice(0, max - 1)}…` : shown;
}

/** A value given as JSON text (a string holding an object or array) parsed; any other value as it is. */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string' || value.length > PARSE_LIMIT_CHARS) return value;
  const trimmed = value.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[') && !trimmed.startsWith('"')) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** Compact JSON of a value, bounded: enough of it for one line. */
function compact(value: unknown): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > PREVIEW_CHARS * 4 ? text.slice(0, PREVIEW_CHARS * 4) : text;
}

/** A content part that is not text, named by its kind: `[image]`, `[audio]`, `[file]`. */
function partName(part: Json): string {
  const type = typeof part.type === 'string' ? part.type : 'part';
  if (/image/.test(type)) return '[image]';
  if (/audio/.test(type)) return '[audio]';
  if (/file|document/.test(type)) return '[file]';
  return `[${type}]`;
}

/**
 * The text of a message's content: a string, or the parts of a list — chat's and the Responses API's
 * text parts, Anthropic's text blocks and tool results — with other parts named.
 */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts: string[] = [];
    for (const part of content) {
      if (typeof part === 'string') parts.push(part);
      else if (isObject(part)) {
        if (typeof part.text === 'string') parts.push(part.text);
        else if (part.type === 'tool_result') parts.push(contentText(part.content));
        // A tool call is told apart (messageAnswer), and a model's thinking is not its answer.
        else if (part.type === 'tool_use' || part.type === 'thinking' || part.type === 'redacted_thinking') continue;
        else if (typeof part.refusal === 'string') parts.push(part.refusal);
        else parts.push(partName(part));
      }
    }
    return parts.join(' ');
  }
  if (isObject(content)) return typeof content.text === 'string' ? content.text : compact(content);
  return present(content) ? String(content) : '';
}

/** `tool: name(args)`: a tool call as one line, its arguments as compact JSON. */
function toolText(name: unknown, args: unknown): string {
  const shown = typeof args === 'string' ? args : present(args) ? compact(args) : '';
  return `tool: ${typeof name === 'string' ? name : '?'}(${shown.replace(/\s+/g, ' ')})`;
}

/** Tool calls in chat's shape (`{function: {name, arguments}}`) or flat (`{name, arguments}`). */
function toolCallsText(calls: unknown): string {
  if (!Array.isArray(calls)) return '';
  return calls
    .filter(isObject)
    .map((c) => {
      const fn = isObject(c.function) ? c.function : c;
      return toolText(fn.name, fn.arguments ?? fn.input ?? fn.args);
    })
    .join('; ');
}

const isMessage = (v: unknown): v is Json =>
  isObject(v) && (typeof v.role === 'string' || (v.type === 'message' && 'content' in v));

/** The message a person wrote: the last user message, else the last message with any text. */
function lastUserText(messages: unknown[]): string | null {
  const list = messages.filter(isMessage);
  if (list.length === 0) return null;
  const user = list.findLast((m) => m.role === 'user' && contentText(m.content) !== '');
  if (user) return contentText(user.content);
  const any = list.findLast((m) => contentText(m.content) !== '' || Array.isArray(m.tool_calls));
  if (!any) return null;
  const text = contentText(any.content);
  return text !== '' ? text : toolCallsText(any.tool_calls);
}

/**
 * An assistant message's answer: its text, its refusal, then its tool calls (chat's `tool_calls`, or
 * Anthropic's tool_use blocks).
 */
function messageAnswer(message: Json): string {
  const parts: string[] = [];
  const text = contentText(message.content);
  if (text !== '') parts.push(text);
  if (typeof message.refusal === 'string' && message.refusal !== '') parts.push(`refusal: ${message.refusal}`);
  const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : [];
  const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => toolText(b.name, b.input));
  const tools = [toolCallsText(message.tool_calls), ...uses].filter((t) => t !== '').join('; ');
  if (tools !== '') parts.push(tools);
  return parts.join(' · ');
}

/** Texts (an embedding's inputs, a batch of prompts) as one line; token ids counted, not listed. */
function textsLine(values: unknown[]): string | null {
  if (values.length === 0) return null;
  if (values.every((v) => typeof v === 'string')) return (values as string[]).join(' | ');
  if (values.every((v) => typeof v === 'number')) return `[${values.length} tokens]`;
  if (values.every((v) => Array.isArray(v) && v.every((t) => typeof t === 'number'))) {
    return `[${values.length} token lists]`;
  }
  return null;
}

/** An audio file as the transcription route records it: "name.mp3 · 12.3 s · en". */
function audioText(input: Json, duration: number | null | undefined): string | null {
  const file = isObject(input.file) ? input.file : null;
  if (!file) return null;
  const parts = [typeof file.filename === 'string' && file.filename !== '' ? file.filename : 'audio'];
  // The file's own length first: the log's audio_duration is what the provider billed (whole seconds).
  const seconds = typeof file.duration_seconds === 'number' ? file.duration_seconds : (duration ?? null);
  if (seconds !== null) parts.push(`${Math.round(seconds * 10) / 10} s`);
  if (typeof input.language === 'string' && input.language !== '') parts.push(input.language);
  return parts.join(' · ');
}

function inputText(source: PreviewSource): string | null {
  const messages = parsed(source.promptMessages);
  if (Array.isArray(messages)) {
    const text = lastUserText(messages);
    if (text !== null) return text;
  }
  const input = parsed(source.input);
  if (!present(input)) return null;
  if (typeof input === 'string') return input;
  if (Array.isArray(input)) return lastUserText(input) ?? textsLine(input) ?? compact(input);
  if (isObject(input)) {
    if (source.logType === 'transcription') {
      const audio = audioText(input, source.audioDuration);
      if (audio !== null) return audio;
    }
    // A request body as sent: chat's messages, the Responses API's input, a completion's prompt.
    if (Array.isArray(input.messages)) {
      const text = lastUserText(input.messages);
      if (text !== null) return text;
    }
    if (typeof input.input === 'string') return input.input;
    if (Array.isArray(input.input)) {
      const text = lastUserText(input.input) ?? textsLine(input.input);
      if (text !== null) return text;
    }
    if (typeof input.prompt === 'string') return input.prompt;
    if (isMessage(input)) return contentText(input.content);
  }
  return compact(input);
}

/** A provider's answer object read for its text: chat, Anthropic, Responses, a transcription, an error. */
function answerText(output: Json, source: PreviewSource): string | null {
  if (Array.isArray(output.choices)) {
    const first = output.choices.find(isObject);
    if (first && isObject(first.message)) return messageAnswer(first.message);
    if (first && typeof first.text === 'string') return first.text;
  }
  if (output.object === 'response' || (output.object === undefined && Array.isArray(output.output))) {
    const items = Array.isArray(output.output) ? output.output.filter(isObject) : [];
    const parts: string[] = [];
    for (const item of items) {
      if (item.type === 'message') parts.push(contentText(item.content));
      else if (item.type === 'function_call') parts.push(toolText(item.name, item.arguments));
    }
    const text = parts.filter((p) => p !== '').join(' · ');
    if (text !== '') return text;
  }
  if (output.object === 'list' || typeof output.data_count === 'number') {
    const dims = embeddingsText(
      typeof output.data_count === 'number' ? output.data_count : source.embeddingCount,
      typeof output.dimensions === 'number' ? output.dimensions : source.embeddingDimensions,
    );
    if (dims !== null) return dims;
  }
  if (isObject(output.error) && typeof output.error.message === 'string') return `error: ${output.error.message}`;
  if (typeof output.role === 'string' || output.type === 'message') return messageAnswer(output);
  if (typeof output.text === 'string') return output.text;
  if (typeof output.content === 'string') return output.content;
  return null;
}

function embeddingsText(count: number | null | undefined, dimensions: number | null | undefined): string | null {
  if (typeof count !== 'number') return null;
  const inputs = `${count} input${count === 1 ? '' : 's'}`;
  return typeof dimensions === 'number' ? `${inputs} × ${dimensions} dims` : inputs;
}

function outputText(source: PreviewSource): string | null {
  if (source.logType === 'embedding') {
    const dims = embeddingsText(source.embeddingCount, source.embeddingDimensions);
    if (dims !== null) return dims;
  }
  if (typeof source.transcript === 'string' && source.transcript !== '') return source.transcript;
  const message = parsed(source.completionMessage);
  if (isObject(message)) {
    const text = messageAnswer(message);
    if (text !== '') return text;
  }
  const output = parsed(source.output);
  if (present(output)) {
    if (typeof output === 'string') return output;
    if (isObject(output)) {
      // A known shape answers even when empty (an answer of no text): its JSON is not what was said.
      const text = answerText(output, source);
      if (text !== null) return text;
    }
    if (Array.isArray(output)) {
      const text = lastAnswer(output) ?? textsLine(output);
      if (text !== null) return text;
    }
    const tools = toolCallsText(parsed(source.toolCalls));
    if (tools !== '') return tools;
    return compact(output);
  }
  const tools = toolCallsText(parsed(source.toolCalls));
  if (tools !== '') return tools;
  if (source.errorMessage) return `error: ${source.errorMessage}`;
  return null;
}

/** The last message of a list of output messages (an OTLP span's output messages), as its answer. */
function lastAnswer(messages: unknown[]): string | null {
  const last = messages.filter(isMessage).at(-1);
  if (!last) return null;
  const text = messageAnswer(last);
  return text !== '' ? text : null;
}

/** Both previews of a log; null where it has nothing to show. */
export function logPreviews(source: PreviewSource): Previews {
  const input = inputText(source);
  const output = outputText(source);
  const line = (text: string | null) => {
    if (text === null) return null;
    const shown = oneLine(text);
    return shown === '' ? null : shown;
  };
  return { input: line(input), output: line(output) };
}
