/** Request validation with zod: every failure becomes one 400 naming the offending input. */
import type { ZodError, ZodType } from 'zod';
import { AppError } from '../errors.js';

export function zodPath(path: readonly PropertyKey[]): string | null {
  return path.length === 0 ? null : path.map(String).join('.');
}

/**
 * The first issue as a 400; `prefix` is prepended to the path (e.g. "logs.3" for a batch entry). A
 * custom issue may carry its own code and a message to use as it is ({ params: { code, verbatim } });
 * a key a strict (PATCH) object does not have is a field that cannot be modified.
 */
export function zodToAppError(err: ZodError, prefix = ''): AppError {
  const issue = err.issues[0];
  const path = [...(prefix ? [prefix] : []), ...(issue?.path ?? [])];
  if (issue?.code === 'unrecognized_keys') {
    const field = zodPath([...path, issue.keys[0]]);
    return new AppError(400, 'field_not_modifiable', `The field '${issue.keys[0]}' cannot be modified`, field);
  }
  const param = zodPath(path);
  const custom =
    issue?.code === 'custom' ? (issue.params as { code?: unknown; verbatim?: unknown } | undefined) : undefined;
  const verbatim = custom?.verbatim === true;
  const message = issue ? (param && !verbatim ? `${param}: ${issue.message}` : issue.message) : 'Invalid request.';
  return new AppError(400, typeof custom?.code === 'string' ? custom.code : 'invalid_value', message, param);
}

/** Parses `input` with `schema` or throws the 400. `prefix` names the part of the request (e.g. a query). */
export function parseWith<T>(schema: ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) throw zodToAppError(result.error);
  return result.data;
}
