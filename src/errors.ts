/**
 * One error type and one envelope (docs/api.md "Errors"). Anything thrown inside a request that is not an
 * AppError becomes a 500 whose message never carries internals.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'upstream_error'
  | 'server_error';

export interface ErrorEnvelope {
  detail: string;
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

/** The type is a function of the status, so callers only choose status, code and message. */
export function errorTypeFor(status: number): ErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 502 || status === 504) return 'upstream_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
    /** The underlying failure, for the service log only. */
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'AppError';
  }

  toEnvelope(): ErrorEnvelope {
    return envelope(this.status, this.code, this.message, this.param);
  }
}

export function envelope(
  status: number,
  code: string | null,
  message: string,
  param: string | null = null,
): ErrorEnvelope {
  return { detail: message, error: { message, type: errorTypeFor(status), param, code } };
}

export const notFound = (message = 'Not found.') => new AppError(404, 'not_found', message);
export const conflict = (code: string, message: string, param: string | null = null) =>
  new AppError(409, code, message, param);

export const NOT_AUTHENTICATED = 'Authentication credentials were not provided.';
export const INVALID_KEY = 'Your API key is invalid or expired';

/**
 * A request body the JSON parser refused (src/http/plumbing/json-body.ts), handed to routes that log a call
 * before refusing it; every other route answers its error at once.
 */
export class RejectedBody {
  constructor(readonly error: AppError) {}
}
