/**
 * NUL characters: PostgreSQL text cannot hold one, so a value with one must be refused before it is
 * stored (SQLite must take exactly what PostgreSQL takes). Only JSON text stores it, escaped as \u0000.
 */
import { AppError } from '../errors.js';

const NUL = '\u0000';

/** Whether a text holds a NUL character. */
export const hasNul = (text: string) => text.includes(NUL);

/** The text with U+FFFD for each NUL: for text that must be stored although it holds one. */
export const withoutNul = (text: string) => (hasNul(text) ? text.replaceAll(NUL, '\uFFFD') : text);

/**
 * The path (dotted, as an error's `param`, under `prefix`) of the first key or string in `value` holding
 * NUL where `allowed` says no; null when there is none.
 */
export function findNul(
  value: unknown,
  allowed: (path: readonly (string | number)[]) => boolean = () => false,
  prefix: readonly (string | number)[] = [],
): string | null {
  const stack: [unknown, (string | number)[]][] = [[value, [...prefix]]];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes(NUL) && !allowed(path)) return path.join('.') || '(body)';
    } else if (Array.isArray(current)) {
      current.forEach((child, index) => stack.push([child, [...path, index]]));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, child] of Object.entries(current)) {
        if (key.includes(NUL) && !allowed([...path, key])) return [...path, key].join('.');
        stack.push([child, [...path, key]]);
      }
    }
  }
  return null;
}

/** The 400 for a NUL character at `where` (a dotted param), worded alike for every body kind. */
export const nulRefused = (where: string) =>
  new AppError(400, 'invalid_value', `${where}: text must not contain NUL characters (\\u0000) here.`, where);

/** Throws nulRefused when `value` (found at `prefix`) holds NUL in any key or string. */
export function refuseNul(value: unknown, prefix: readonly (string | number)[]): void {
  const where = findNul(value, undefined, prefix);
  if (where !== null) throw nulRefused(where);
}
