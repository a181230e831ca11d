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

/** The text of a message's content: a string, or the text parts of a list (other parts named). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === null || content === undefined ? '' : JSON.stringify(content);
  return content
    .map((part: unknown) => {
      const p = part as { type?: unknown; text?: unknown };
      if (typeof p?.text === 'string') return p.text;
      return `[${typeof p?.type === 'string' ? p.type : 'part'}]`;
    })
    .join('\n');
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
  const toolCalls = Array.isArray(m.tool_calls)
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
  // A Responses API item that is no chat message (reasoning, a hosted tool's call) is named by its type.
  const role = typeof m.role === 'string' ? m.role : typeof m.type === 'string' ? m.type : 'message';
  return {
    role,
    text: contentText(m.content ?? (Array.isArray(m.summary) ? m.summary : undefined)),
    toolCalls,
    toolCallId: typeof m.tool_call_id === 'string' ? m.tool_call_id : null,
  };
}

/** The conversation of a chat-like log: its prompt messages, then its completion; null when it has none. */
export function conversationOf(promptMessages: unknown, completionMessage: unknown): ShownMessage[] | null {
  if (!Array.isArray(promptMessages)) return null;
  const shown = [...promptMessages, completionMessage].map(shownMessage).filter((m) => m !== null);
  return shown.length > 0 ? shown : null;
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
