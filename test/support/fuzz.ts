/** Seeded generators of careless and hostile input, and the check every fuzzed answer must pass. */
import assert from 'node:assert/strict';
import { LOG_FIELDS } from '../../src/filters/registry.js';
import { OPERATORS } from '../../src/filters/types.js';
import type { ApiResponse, TestApp } from './harness.js';
import { type ProxyTestApp, startProxyApp } from './proxy-app.js';
import type { rng } from './rng.js';

export type Rng = ReturnType<typeof rng>;

/** The seed of a fuzzing run: GATELOG_FUZZ_SEED, or one from the clock (the suites print it in their names). */
export const FUZZ_SEED = Number(process.env.GATELOG_FUZZ_SEED ?? Date.now() % 1_000_000);

/** What a fuzzing suite calls: a proxy app, with the app and the tenant's key at hand. */
export async function startFuzzTarget(): Promise<{ p: ProxyTestApp; t: TestApp; key: string }> {
  const p = await startProxyApp();
  return { p, t: p.t, key: p.a.key };
}

export const FIELD_NAMES = [...LOG_FIELDS.fields.keys()];
export const NASTY_STRINGS = [
  '',
  ' ',
  'constructor',
  '__proto__',
  'toString',
  'a\u0000b',
  '%',
  '_',
  '\\',
  "'; drop table logs; --",
  'ü',
  '東京',
  '🙂',
  '\ud800',
  'x'.repeat(5000),
  '1e400',
  '-0',
  'NaN',
  'Infinity',
  '2024-01-01',
  '2024-13-45T99:99:99Z',
  '9999-12-31T23:59:59Z',
  'true',
  'null',
  '[]',
  '{}',
  '1,2,3',
  'metadata__',
  'scores__',
  'a'.repeat(101),
];
export const NASTY_NUMBERS = [
  0,
  -1,
  1,
  0.5,
  2 ** 31,
  2 ** 31 - 1,
  2 ** 53,
  -(2 ** 53),
  1e300,
  -1e300,
  1e-300,
  3e9,
  599,
  100,
];

/** A path segment; a lone surrogate (which encodeURIComponent refuses) as the bytes a client might send. */
export function pathSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

export function scalar(r: Rng): unknown {
  switch (r.int(0, 5)) {
    case 0:
      return r.pick(NASTY_STRINGS);
    case 1:
      return r.pick(NASTY_NUMBERS);
    case 2:
      return r.next() < 0.5;
    case 3:
      return null;
    case 4:
      return `s${r.int(0, 99)}`;
    default:
      return r.int(-5, 1000);
  }
}

export function value(r: Rng, depth = 0): unknown {
  const roll = r.next();
  if (depth > 3 || roll < 0.6) return scalar(r);
  if (roll < 0.8) return Array.from({ length: r.int(0, 4) }, () => value(r, depth + 1));
  const obj: Record<string, unknown> = {};
  for (let i = r.int(0, 4); i > 0; i--) obj[r.next() < 0.5 ? r.pick(NASTY_STRINGS) : `k${i}`] = value(r, depth + 1);
  return obj;
}

export const fieldName = (r: Rng) =>
  r.pick([
    () => r.pick(FIELD_NAMES),
    () => `metadata__${r.pick(NASTY_STRINGS)}`,
    () => `scores__${r.pick(NASTY_STRINGS)}`,
    () => r.pick(NASTY_STRINGS),
  ])();

export function listQuery(r: Rng): string {
  const params = new URLSearchParams();
  for (let i = r.int(0, 5); i > 0; i--) {
    const name = r.pick([
      'page',
      'page_size',
      'sort_by',
      'start_time',
      'end_time',
      'is_test',
      'all_envs',
      'fetch_filters',
      'include_fields',
      fieldName(r),
      `${fieldName(r)}[operator]`,
      `${fieldName(r)}[connector]`,
    ]);
    params.append(name, String(scalar(r)));
  }
  return params.toString();
}

export function filters(r: Rng): unknown {
  if (r.next() < 0.1) return value(r);
  const result: Record<string, unknown> = {};
  for (let i = r.int(0, 4); i > 0; i--) {
    result[fieldName(r)] =
      r.next() < 0.15
        ? value(r)
        : {
            operator: r.next() < 0.8 ? r.pick(OPERATORS) : scalar(r),
            value: r.next() < 0.7 ? Array.from({ length: r.int(0, 3) }, () => scalar(r)) : value(r),
            ...(r.next() < 0.1 ? { [r.pick(NASTY_STRINGS)]: value(r) } : {}),
          };
  }
  return result;
}

export function logBody(r: Rng): unknown {
  if (r.next() < 0.1) return value(r);
  const body: Record<string, unknown> = { model: r.next() < 0.8 ? 'gpt-4o' : scalar(r) };
  for (let i = r.int(0, 6); i > 0; i--) {
    body[
      r.next() < 0.8
        ? r.pick([...FIELD_NAMES, 'input', 'output', 'metadata', 'usage', 'log_type'])
        : r.pick(NASTY_STRINGS)
    ] = value(r);
  }
  return body;
}

/** How many answers had a status in [from, to). */
export const answersIn = (statuses: Map<number, number>, from: number, to: number) =>
  [...statuses].filter(([s]) => s >= from && s < to).reduce((sum, [, n]) => sum + n, 0);

/** What a fuzzing run sent and what came back. */
export interface FuzzRun {
  seed: number;
  sent: number;
  failures: string[];
  statuses: Map<number, number>;
}

/**
 * A fuzzing run's answers: no failure, and more than `moreThan.ok` answers 2xx and `moreThan.refused`
 * 4xx (the requests reach the routes' work, not only their first check).
 */
export function assertFuzzAnswers(run: FuzzRun, moreThan: { ok: number; refused: number }): void {
  const { seed, sent, failures, statuses } = run;
  assert.deepEqual(failures.slice(0, 10), [], `seed ${seed}: ${failures.length} failures`);
  const count = (from: number, to: number) => answersIn(statuses, from, to);
  assert.ok(count(200, 300) > moreThan.ok, `2xx: ${count(200, 300)} of ${sent}`);
  assert.ok(count(400, 500) > moreThan.refused, `4xx: ${count(400, 500)} of ${sent}`);
}

/** No 500 (a list stopped at its query budget excepted) and every error in the envelope. */
export function checkAnswer(res: ApiResponse, where: string, failures: string[]): void {
  if (res.status >= 500 && !(res.status === 503 && res.body?.error?.code === 'query_timeout')) {
    failures.push(`${res.status} ${where}: ${res.text.slice(0, 200)}`);
  } else if (res.status >= 400) {
    const envelope = res.body?.error;
    if (!envelope || typeof envelope.message !== 'string' || res.body.detail !== envelope.message) {
      failures.push(`no envelope for ${res.status} ${where}: ${res.text.slice(0, 200)}`);
    }
  }
}
