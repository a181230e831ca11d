/**
 * A provider's own error code (OpenAI's `error.code`, Anthropic's `error.type`) as a log keeps it: only a
 * short code-like string is one. Anything else — a number, a sentence, text holding a NUL — is not
 * taken, and the log says `upstream_error` instead (gateway/core/outcome.ts): a provider's body is not
 * the caller's to fix, and a code is what the list filters and groups by.
 */

/** As long as the logging API lets a caller's `error_code` be (logs/write/ingest-schema.ts). */
const MAX_CHARS = 100;
/** Letters, digits and the separators codes use (`rate_limit_exceeded`, `invalid-api-key`, `context.length`). */
const CODE = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

export function providerErrorCode(value: unknown): string | null {
  return typeof value === 'string' && value.length <= MAX_CHARS && CODE.test(value) ? value : null;
}
