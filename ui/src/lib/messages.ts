/**
 * A log read as what it is (pure): a chat's (or a response's) messages with their roles and tool calls,
 * an embedding call's input texts. The panel shows these before the raw JSON.
 */

export interface ShownMessage {
  role: string;
  text: string;
  toolCalls: { id: string | null; name: string; arguments: string }[];
  /** A tool result's call (tool_call_id), null otherwise. */
  toolCallId: string | null;
}

/** A content part as text: its text, a tool result's content, or its kind named (`[image]`). */
function partText(part: unknown): string {
  const p = part as { type?: unknown; text?: unknown; content?: unknown };
  if (typeof p?.text === 'string') return p.text;
  // Anthropic's tool result, sent back in a user message: what the tool answered.
  if (p?.type === 'tool_result') return contentText(p.content);
  return `[${typeof p?.type === 'string' ? p.type : 'part'}]`;
}

/** The text of a message's content: a string, or the text parts of a list (other parts named). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === null || content === undefined ? '' : JSON.stringify(content);
  return content
    .filter((part: unknown) => (part as { type?: unknown } | null)?.type !== 'tool_use')
    .map(partText)
    .join('\n');
}

/** Anthropic's tool_use content parts (an assistant message's tool calls) as tool calls. */
function toolUses(content: unknown): ShownMessage['toolCalls'] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((part: unknown) => (part as { type?: unknown } | null)?.type === 'tool_use')
    .map((part: unknown) => {
      const p = part as { id?: unknown; name?: unknown; input?: unknown };
      return {
        id: typeof p.id === 'string' ? p.id : null,
        name: typeof p.name === 'string' ? p.name : '?',
        arguments: typeof p.input === 'string' ? p.input : JSON.stringify(p.input ?? null),
      };
    });
}

/** Whether a content list is tool results only (Anthropic's user message carrying them). */
const toolResultsOnly = (content: unknown): boolean =>
  Array.isArray(content) &&
  content.length > 0 &&
  content.every((part: unknown) => (part as { type?: unknown } | null)?.type === 'tool_result');

/** The call a content list's tool results answer, when they answer one. */
function toolResultId(content: unknown): string | null {
  if (!toolResultsOnly(content)) return null;
  const ids = (content as { tool_use_id?: unknown }[]).map((p) => p.tool_use_id);
  return ids.length === 1 && typeof ids[0] === 'string' ? ids[0] : null;
}

export function shownMessage(value: unknown): ShownMessage | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const m = value as {
    role?: unknown;
    type?: unknown;
    content?: unknown;
    summary?: unknown;
    tool_calls?: unknown;
    tool_call_id?: unknown;
  };
  const chatToolCalls = Array.isArray(m.tool_calls)
    ? m.tool_calls.map((call: unknown) => {
        const c = call as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
        const fn = c?.function;
        return {
          id: typeof c?.id === 'string' ? c.id : null,
          name: typeof fn?.name === 'string' ? fn.name : '?',
          arguments: typeof fn?.arguments === 'string' ? fn.arguments : JSON.stringify(fn?.arguments ?? null),
        };
      })
    : [];
  // A Responses API item that is no chat message (reasoning, a hosted tool's call) is named by its type;
  // a user message of tool results only (Anthropic's way of sending them back) reads as the tool's.
  const role = toolResultsOnly(m.content)
    ? 'tool'
    : typeof m.role === 'string'
      ? m.role
      : typeof m.type === 'string'
        ? m.type
        : 'message';
  return {
    role,
    text: contentText(m.content ?? (Array.isArray(m.summary) ? m.summary : undefined)),
    toolCalls: [...chatToolCalls, ...toolUses(m.content)],
    toolCallId: typeof m.tool_call_id === 'string' ? m.tool_call_id : toolResultId(m.content),
  };
}

/** The conversation of a chat-like log: its prompt messages, then its completion; null when it has none. */
export function conversationOf(promptMessages: unknown, completionMessage: unknown): ShownMessage[] | null {
  if (!Array.isArray(promptMessages)) return null;
  const shown = [...promptMessages, completionMessage].map(shownMessage).filter((m) => m !== null);
  return shown.length > 0 ? shown : null;
}

/**
 * What a call of a conversation added to it: the prompt's messages after the last answer it holds (the
 * user's new message, or the results of the tools the last answer called), then its own answer. A
 * coding agent sends the whole conversation on every call; this is the turn that call took. The system
 * prompt is left out (the same on every call). Null when the log has no messages.
 */
export function turnOf(promptMessages: unknown, completionMessage: unknown): ShownMessage[] | null {
  if (!Array.isArray(promptMessages)) return null;
  const shown = promptMessages.map(shownMessage);
  const lastAnswer = shown.findLastIndex((m) => m?.role === 'assistant');
  const added = shown.slice(lastAnswer + 1).filter((m) => m !== null && m.role !== 'system');
  const answer = shownMessage(completionMessage);
  const turn = answer ? [...added, answer] : added;
  return turn.length > 0 ? (turn as ShownMessage[]) : null;
}

/** An embedding call's input texts (its input as JSON text: a string or a list of strings); else null. */
export function embeddingTexts(input: string | null): string[] | null {
  if (input === null) return null;
  try {
    const value = JSON.parse(input) as unknown;
    if (typeof value === 'string') return [value];
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  } catch {
    // A preview cut short: not readable as texts.
  }
  return null;
}
