/**
 * The texts a log stores of a call's prompt and of its answer (docs/api.md "The log record", "Size of
 * a log"). A proxied call's prompt is stored as `input` and `prompt_messages` (and `tools`,
 * `tool_choice`), its answer as `output`, `completion_message`, `tool_calls` (and a transcript): the
 * same text up to three times. Each of the two is kept within one budget (GATELOG_LOG_MAX_BYTES) for
 * all of its copies together, shared out by fit-json.ts, so that neither the number of copies nor
 * the number of choices, tool calls or names in them makes a log larger than that.
 *
 * What a caller of the logging API sends is stored as sent (the request body's limit bounds it); the
 * copy gatelog derives from it (`input` from `prompt_messages`, `output` from `completion_message`)
 * is within the budget.
 */
import { toJsonText } from '../json-text.js';
import { FLOOR, fitJson } from './fit-json.js';

export type CopyField =
  'input' | 'prompt_messages' | 'tools' | 'tool_choice' | 'output' | 'completion_message' | 'tool_calls' | 'transcript';

/** The fields that hold the prompt, then those that hold the answer: each group has one budget. */
const GROUPS: readonly (readonly CopyField[])[] = [
  ['input', 'prompt_messages', 'tools', 'tool_choice'],
  ['output', 'completion_message', 'tool_calls', 'transcript'],
];

export const ALL_COPY_FIELDS: ReadonlySet<CopyField> = new Set(GROUPS.flat());

/** How each field is stored: JSON text (a string holding JSON taken as it is), JSON, or plain text. */
const STORED_AS: Record<CopyField, 'text' | 'json' | 'plain'> = {
  input: 'text',
  output: 'text',
  tools: 'text',
  tool_choice: 'text',
  tool_calls: 'text',
  prompt_messages: 'json',
  completion_message: 'json',
  transcript: 'plain',
};

/**
 * The stored texts of the fields' values: those named in `capped` fitted into `budget` per group (the
 * others whole); null for a value that is absent.
 */
export function storedCopies(
  values: Readonly<Record<CopyField, unknown>>,
  budget: number,
  capped: ReadonlySet<CopyField>,
): Record<CopyField, string | null> {
  const fitted: Record<string, unknown> = { ...values };
  for (const group of GROUPS) {
    const names = group.filter((name) => capped.has(name) && values[name] !== undefined && values[name] !== null);
    if (names.length === 0) continue;
    // The group as one list: fitJson shares its room among the fields as among a list's items. Each
    // field gets at least its least, so that none is left out of the list (and none misplaced).
    const room = Math.max(budget, names.length * (FLOOR + 1) + 2);
    const shares = fitJson(
      names.map((name) => values[name]),
      room,
    ) as unknown[];
    names.forEach((name, i) => (fitted[name] = shares[i]));
  }
  // The same value stored twice (a chat call's messages as input and prompt_messages) is serialized once.
  const texts = new Map<unknown, string | null>();
  const stored = {} as Record<CopyField, string | null>;
  for (const name of ALL_COPY_FIELDS) {
    const value = fitted[name];
    const as = STORED_AS[name];
    if (value === undefined || value === null) stored[name] = null;
    else if (as === 'plain') stored[name] = typeof value === 'string' ? value : JSON.stringify(value);
    else {
      const key = typeof value === 'object' ? value : null;
      let text = key === null ? undefined : texts.get(key);
      if (text === undefined) {
        text = as === 'json' ? JSON.stringify(value) : toJsonText(value);
        if (key !== null) texts.set(key, text);
      }
      stored[name] = text;
    }
  }
  return stored;
}
