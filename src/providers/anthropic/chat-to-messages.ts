/**
 * An OpenAI chat-completions body as an Anthropic Messages body, for a chat call served by Claude.
 *
 * - Every system and developer message, wherever it stands, goes into `system` as text blocks, in order
 *   (Claude has one system prompt; dropping all but the first loses instructions).
 * - Claude needs user and assistant turns to alternate: consecutive messages of one role are merged
 *   into one turn. A tool message is a user turn holding a tool_result; the results that answer one
 *   assistant turn share one user turn, and come before any user text in it (Claude reads the results
 *   of a tool_use only at the start of the next turn).
 * - The rest (sampling, tools, limits, reasoning) is chat-params.ts; content parts chat-content.ts.
 *
 * `fields`: the body parseChatRequest validated, platform parameters taken out. Throws an AppError
 * (400) naming the field for what cannot be translated.
 */
import { assistantBlocks, invalid, systemBlocks, toolResultBlock, unsupported, userBlocks } from './chat-content.js';
import { translateParams } from './chat-params.js';

type Json = Record<string, unknown>;

interface Turn {
  role: 'user' | 'assistant';
  content: Json[];
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `model`: the model as Anthropic knows it (a provider prefix taken off). */
export function chatToMessages(fields: Json, model: string): Json {
  if (!Array.isArray(fields.messages)) throw invalid('messages', 'messages must be a non-empty list of messages.');
  const system: Json[] = [];
  const turns: Turn[] = [];
  const add = (role: Turn['role'], blocks: Json[]) => {
    // A message with nothing in it (an empty text) adds nothing; Claude refuses empty turns.
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  fields.messages.forEach((message: unknown, i) => {
    const at = `messages.${i}`;
    if (!isObject(message)) throw invalid(at, `${at} must be an object.`);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...systemBlocks(message, at));
        break;
      case 'user':
        add('user', userBlocks(message, at));
        break;
      case 'assistant':
        add('assistant', assistantBlocks(message, at));
        break;
      case 'tool':
        add('user', [toolResultBlock(message, at)]);
        break;
      case 'function':
        throw unsupported(
          `${at}.role`,
          `${at}.role 'function' (legacy function results) cannot be sent to Claude; use tool.`,
        );
      default:
        throw invalid(`${at}.role`, `${at}.role must be one of system, developer, user, assistant, tool.`);
    }
  });
  if (turns.length === 0) {
    throw invalid('messages', 'messages must hold at least one user or assistant message with content for Claude.');
  }
  for (const turn of turns) {
    if (turn.role === 'user') turn.content = toolResultsFirst(turn.content);
  }
  const body: Json = { ...translateParams(fields), model };
  if (system.length > 0) body.system = system;
  body.messages = turns;
  return body;
}

/** The tool_result blocks of a user turn before its other blocks, each group in its own order. */
function toolResultsFirst(blocks: Json[]): Json[] {
  const results = blocks.filter((b) => b.type === 'tool_result');
  return results.length === 0 ? blocks : [...results, ...blocks.filter((b) => b.type !== 'tool_result')];
}
