/** Request validation with zod: every failure becomes one 400 naming the offending input. */
import type { ZodError, ZodType } from 'zod';
import { AppError } from '../errors.js';

export function zodPath(path: readonly PropertyKey[]): string | null {
  return path.length === 0 ? null : path.map(String).join('.');
}

/** The first issue as a 400; `prefix` is prepended to the path (e.g. "logs.3" for a batch entry). */
export function zodToAppError(err: ZodError, prefix = ''): AppError {
  const issue = err.issues[0];
  const param = zodPath([...(prefix ? [prefix] : []), ...(issue?.path ?? [])]);
  const message = issue ? (param ? `${param}: ${issue.message}` : issue.message) : 'Invalid request.';
  return new AppError(400, 'invalid_value', message, param);
}

/** Parses `input` with `schema` or throws the 400. `prefix` names the part of the request (e.g. a query). */
export function parseWith<T>(schema: ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) throw zodToAppError(result.error);
  return result.data;
}
