/**
 * A log's input and output as the compare view diffs them (pure): what was said, line by line — a
 * chat's messages as "role: text" with their tool calls, an embedding call's texts, a transcript —
 * never the provider's JSON; a value of no known shape as indented JSON.
 */
import { embeddingTexts, type ShownMessage, shownMessage } from './messages.js';

/** The fields of a log (as GET /api/request-logs/{id}/ answers) that the compare view reads. */
export interface ComparedLog {
  log_type: string;
  input: string | null;
  output: string | null;
  prompt_messages?: unknown;
  completion_message?: unknown;
  transcript?: unknown;
  embedding_count?: unknown;
  embedding_dimensions?: unknown;
  [field: string]: unknown;
}

const pretty = (text: string | null): string => {
  if (text === null) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};

function messageLines(m: ShownMessage): string[] {
  const lines = m.text === '' ? [] : [`${m.role}: ${m.text}`];
  for (const call of m.toolCalls) lines.push(`${m.role}: tool: ${call.name}(${call.arguments})`);
  return lines.length > 0 ? lines : [`${m.role}:`];
}

/** Messages as lines, when the value is a list of them (or one); null otherwise. */
function messagesText(value: unknown): string | null {
  const list = Array.isArray(value) ? value : value && typeof value === 'object' ? [value] : [];
  // Only objects that read as messages: a list of anything else is left to the JSON form.
  const messages = list.filter((v) => v && typeof v === 'object' && 'role' in v).map(shownMessage);
  if (messages.length === 0 || messages.length !== list.length) return null;
  return messages.flatMap((m) => (m ? messageLines(m) : [])).join('\n');
}

export function compareText(log: ComparedLog, side: 'input' | 'output'): string {
  if (side === 'input') {
    if (log.log_type === 'embedding') {
      const texts = embeddingTexts(log.input);
      if (texts) return texts.join('\n');
    }
    return messagesText(log.prompt_messages) ?? pretty(log.input);
  }
  if (log.log_type === 'embedding' && typeof log.embedding_count === 'number') {
    const dims = typeof log.embedding_dimensions === 'number' ? ` × ${log.embedding_dimensions} dims` : '';
    return `${log.embedding_count} inputs${dims}`;
  }
  if (typeof log.transcript === 'string' && log.transcript !== '') return log.transcript;
  return messagesText(log.completion_message) ?? pretty(log.output);
}
