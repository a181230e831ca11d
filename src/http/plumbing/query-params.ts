/** Parsers for the shared list query parameters: each bad value is a 400 naming the parameter. */
import { AppError } from '../../errors.js';
import { parseIsoTime } from '../../util/iso-time.js';

export const MAX_PAGE_SIZE = 1000;

export type Query = Record<string, string | string[] | undefined>;

/** A single string value; a repeated parameter is a 400. */
export function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) {
    throw new AppError(400, 'invalid_parameter', `${name} may be given only once.`, name);
  }
  return value;
}

/**
 * The largest page number a list accepts: its offset (page × page_size) stays an exact integer that both
 * databases take, and is far beyond any store.
 */
export const MAX_PAGE = 1_000_000_000;

export function parsePositiveInt(query: Query, name: string, fallback: number, max = MAX_PAGE): number {
  const raw = single(query, name);
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || value < 1 || value > max) {
    throw new AppError(
      400,
      'invalid_parameter',
      `${name} must be an integer from 1 to ${max}; got '${raw.slice(0, 40)}'.`,
      name,
    );
  }
  return value;
}

export function parseBoolean(query: Query, name: string): boolean | undefined {
  const raw = single(query, name);
  if (raw === undefined || raw === '') return undefined;
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new AppError(400, 'invalid_parameter', `${name} must be true or false; got '${raw}'.`, name);
}

export function parseTimeParam(query: Query, name: string): number | undefined {
  const raw = single(query, name);
  if (raw === undefined || raw === '') return undefined;
  const ms = parseIsoTime(raw);
  if (ms === null) {
    throw new AppError(400, 'invalid_parameter', `${name} must be an ISO 8601 datetime; got '${raw}'.`, name);
  }
  return ms;
}

/** The inclusive time range of a list call from its start_time and end_time; defaults to the last hour. */
export function timeRange(start: number | undefined, end: number | undefined, now = Date.now()) {
  const to = end ?? now;
  const from = start ?? to - 3600_000;
  if (from > to) {
    throw new AppError(400, 'invalid_parameter', 'start_time must not be after end_time.', 'start_time');
  }
  return { start: from, end: to };
}
