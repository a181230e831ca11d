/**
 * Anthropic's errors in OpenAI's shape, for a chat call translated to Claude: the OpenAI client reads
 * `{"error": {message, type, param, code}}`, Anthropic writes `{"type": "error", "error": {type,
 * message}}`. The status stays Anthropic's; the error's type (`overloaded_error`, `rate_limit_error`,
 * `invalid_request_error`…) is both the type and the code, so nothing Anthropic said is lost.
 */

type Json = Record<string, unknown>;

export interface ChatError {
  error: { message: string; type: string; param: null; code: string };
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `body`: Anthropic's error body (parsed, or its text); `status` decides the type when it names none. */
export function chatErrorOf(body: unknown, status: number | null = null): ChatError {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = body;
    }
  }
  const inner = isObject(parsed) && isObject(parsed.error) ? parsed.error : null;
  const type = typeof inner?.type === 'string' && inner.type !== '' ? inner.type : typeForStatus(status);
  const message =
    typeof inner?.message === 'string' && inner.message !== ''
      ? inner.message
      : typeof parsed === 'string' && parsed.trim() !== ''
        ? parsed.trim().slice(0, 1000)
        : `The provider answered with an error (${type}).`;
  return { error: { message, type, param: null, code: type } };
}

/** Anthropic's error types by status (its documented table), for a body that names none. */
function typeForStatus(status: number | null): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}
