/**
 * A coding agent's session, as its calls carry it (docs/api.md "Sessions"): Claude Code sends
 * `x-claude-code-session-id`, Codex `session-id` (its older releases `session_id`, with an underscore), the
 * same value on every call of one session. A proxied call that names no thread_identifier of its own is
 * logged with it, so an agent's calls group into sessions without the agent knowing gatelog.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The headers read, in the order they are tried. */
export const SESSION_HEADERS = ['x-claude-code-session-id', 'session-id', 'session_id'] as const;

/** The session a call's headers name; null: none (an empty header names none). */
export function sessionOf(headers: IncomingHttpHeaders): string | null {
  for (const name of SESSION_HEADERS) {
    const value = headers[name];
    // Node joins a repeated custom header with ", "; an array only comes from set-cookie, never here.
    const text = (Array.isArray(value) ? value.join(', ') : value)?.trim();
    if (text) return text;
  }
  return null;
}
