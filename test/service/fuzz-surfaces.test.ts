/**
 * Seeded fuzzing of the routes added after the first fuzz pass (service/fuzz.test.ts): analytics, facets,
 * settings (cache and retention), saved views, providers, export tokens and exports, the cache, the
 * stored Responses routes, chat completions and Anthropic's Messages API. Whatever arrives: no 500,
 * every error in the envelope, and the service still answers afterwards. Providers registered here only
 * ever point at loopback. The seed comes from GATELOG_FUZZ_SEED (printed on failure).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BUCKET_NAMES } from '../../src/logs/summary/buckets.js';
import { AGGREGATES, GROUP_COLUMNS, METRIC_COLUMNS } from '../../src/logs/summary/request.js';
import {
  checkAnswer,
  fieldName,
  filters,
  listQuery,
  NASTY_STRINGS,
  pathSegment,
  type Rng,
  scalar,
  value,
  FUZZ_SEED as SEED,
  startFuzzTarget,
  assertFuzzAnswers,
} from '../support/fuzz.js';
import { api, type ApiResponse, type TestApp } from '../support/harness.js';
import type { ProxyTestApp } from '../support/proxy-app.js';
import { rng } from '../support/rng.js';

const REQUESTS = 1500;

/** Mostly a real time within the last day, sometimes anything. */
const someTime = (r: Rng) =>
  r.next() < 0.75 ? new Date(Date.now() - r.int(0, 86_400) * 1000).toISOString() : scalar(r);

/** Sometimes a key left out, sometimes a stray one: the shapes careless clients send. */
function sloppy(r: Rng, body: Record<string, unknown>): unknown {
  if (r.next() < 0.05) return value(r);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (r.next() < 0.85) out[k] = r.next() < 0.85 ? v : value(r);
  if (r.next() < 0.1) out[r.pick(NASTY_STRINGS)] = value(r);
  return out;
}

function summaryBody(r: Rng): unknown {
  const metric = () =>
    r.next() < 0.9
      ? {
          agg: r.next() < 0.9 ? r.pick(AGGREGATES) : scalar(r),
          ...(r.next() < 0.6 ? { field: r.next() < 0.8 ? r.pick(METRIC_COLUMNS) : fieldName(r) } : {}),
        }
      : value(r);
  return sloppy(r, {
    start_time: someTime(r),
    end_time: someTime(r),
    bucket: r.next() < 0.8 ? r.pick(BUCKET_NAMES) : scalar(r),
    tz: r.pick(['UTC', 'America/New_York', 'Asia/Kathmandu', 'Mars/Olympus', scalar(r)]),
    metrics: Array.from({ length: r.int(0, 4) }, metric),
    group_by: Array.from({ length: r.int(0, 2) }, () =>
      r.next() < 0.7 ? r.pick(Object.keys(GROUP_COLUMNS)) : `metadata__${r.pick(NASTY_STRINGS)}`,
    ),
    limit: r.next() < 0.7 ? r.int(1, 100) : scalar(r),
    filters: filters(r),
  });
}

function chatBody(r: Rng): unknown {
  const content = () =>
    r.next() < 0.6
      ? r.pick(NASTY_STRINGS.filter(Boolean))
      : [{ type: r.pick(['text', 'image_url', 'input_audio', 'nope']), text: scalar(r) }];
  return sloppy(r, {
    model: r.next() < 0.8 ? 'gpt-4o-mini' : scalar(r),
    messages:
      r.next() < 0.9
        ? Array.from({ length: r.int(0, 3) }, () => ({
            role: r.next() < 0.8 ? r.pick(['system', 'user', 'assistant', 'tool', 'developer']) : scalar(r),
            content: content(),
          }))
        : value(r),
    ...(r.next() < 0.3 ? { [r.pick(['metadata', 'tools', 'tool_choice', 'n', 'cache_enabled'])]: value(r) } : {}),
  });
}

function anthropicBody(r: Rng): unknown {
  return sloppy(r, {
    model: r.next() < 0.8 ? 'claude-sonnet-4-5' : scalar(r),
    max_tokens: r.next() < 0.8 ? r.int(1, 4096) : scalar(r),
    messages:
      r.next() < 0.9
        ? Array.from({ length: r.int(0, 3) }, () => ({
            role: r.pick(['user', 'assistant', 'system', 'x']),
            content: r.next() < 0.6 ? r.pick(NASTY_STRINGS) : [{ type: 'text', text: scalar(r) }],
          }))
        : value(r),
    ...(r.next() < 0.3 ? { [r.pick(['metadata', 'system', 'tools', 'thinking'])]: value(r) } : {}),
  });
}

/** One request: method, path, body. `ids` are names the earlier answers gave (views, logs). */
function request(r: Rng, ids: { views: string[]; logs: string[] }): [string, string, unknown] {
  const someId = (known: string[]) =>
    known.length > 0 && r.next() < 0.7 ? r.pick(known) : pathSegment(String(scalar(r)));
  switch (r.int(0, 13)) {
    case 0:
    case 1:
      return ['POST', '/api/request-logs/summary/', summaryBody(r)];
    case 2:
      return ['GET', `/api/request-logs/facets/?${listQuery(r)}`, undefined];
    case 3:
      return ['POST', `/api/request-logs/facets/?${listQuery(r)}`, { filters: filters(r) }];
    case 4:
      return r.next() < 0.3
        ? ['GET', '/api/settings/', undefined]
        : [
            'PATCH',
            '/api/settings/',
            sloppy(r, {
              [r.pick(['cache_enabled', 'cache_ttl', 'cache_options', 'retention_days', 'content_retention_days'])]:
                r.next() < 0.5 ? r.int(-5, 40_000) : value(r),
            }),
          ];
    case 5:
      return [
        'POST',
        '/api/views/',
        sloppy(r, {
          name: r.next() < 0.7 ? `view ${r.int(0, 1e6)}` : scalar(r),
          query: r.next() < 0.7 ? `?${listQuery(r)}` : scalar(r),
          columns: r.next() < 0.7 ? ['model', 'cost'] : value(r),
        }),
      ];
    case 6: {
      const method = r.pick(['GET', 'PATCH', 'DELETE']);
      return [method, `/api/views/${someId(ids.views)}/`, sloppy(r, { name: scalar(r), query: scalar(r) })];
    }
    case 7:
      return [
        'POST',
        '/api/provider-keys/',
        sloppy(r, {
          provider: r.pick(['openai', 'anthropic', 'azure', 'local-llm', scalar(r)]),
          api_key: r.next() < 0.8 ? 'sk-fuzz' : scalar(r),
          base_url: r.pick(['http://127.0.0.1:9/v1', 'http://[::1]:9', 'not a url', 'ftp://127.0.0.1/', scalar(r)]),
          models: r.next() < 0.7 ? ['fuzz-*'] : value(r),
          kind: r.pick(['openai', 'anthropic', 'azure', scalar(r)]),
          weight: scalar(r),
        }),
      ];
    case 8:
      return r.next() < 0.5
        ? ['POST', '/api/request-logs/export/tokens/', sloppy(r, { format: r.pick(['csv', 'jsonl', scalar(r)]) })]
        : [
            r.pick(['GET', 'POST']),
            `/api/request-logs/export/?format=${r.pick(['csv', 'jsonl', String(scalar(r))])}&${listQuery(r)}`,
            { filters: filters(r) },
          ];
    case 9:
      return ['GET', `/api/request-logs/export/download/?token=${pathSegment(String(scalar(r)))}`, undefined];
    case 10:
      return r.next() < 0.5
        ? ['DELETE', `/api/cache/?${listQuery(r)}`, undefined]
        : [
            r.pick(['GET', 'DELETE']),
            `/api/responses/${pathSegment(String(scalar(r)))}${r.pick(['', '/input_items'])}`,
            undefined,
          ];
    case 11:
      return ['POST', '/api/chat/completions', chatBody(r)];
    case 12:
      return ['POST', '/api/anthropic/v1/messages', anthropicBody(r)];
    default:
      return [
        r.pick(['GET', 'PATCH', 'DELETE']),
        `/api/request-logs/${someId(ids.logs)}/`,
        sloppy(r, { metadata: value(r), scores: value(r) }),
      ];
  }
}

/** As `api`, but an export's lines (JSON Lines, CSV) are kept as text: only an error is parsed. */
async function call(baseUrl: string, method: string, path: string, key: string, body: unknown): Promise<ApiResponse> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = /^application\/json\b/.test(res.headers.get('content-type') ?? '') && text !== '';
  return { status: res.status, headers: res.headers, body: json ? JSON.parse(text) : null, text };
}

describe(`fuzzing the routes added since the first pass (GATELOG_FUZZ_SEED=${SEED})`, () => {
  let p: ProxyTestApp;
  let t: TestApp;
  let key: string;
  const ids = { views: [] as string[], logs: [] as string[] };
  before(async () => {
    ({ p, t, key } = await startFuzzTarget());
    const logs = Array.from({ length: 30 }, (_, i) => ({
      model: ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4-5'][i % 3],
      prompt_messages: [{ role: 'user', content: `question ${i}` }],
      completion_message: { role: 'assistant', content: `answer ${i}` },
      metadata: { team: ['a', 'b'][i % 2] },
      customer_identifier: `c${i % 4}`,
      status_code: i % 7 === 0 ? 500 : 200,
    }));
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key, body: { logs } });
    assert.equal(res.status, 201, res.text);
    ids.logs.push(...(res.body.unique_ids as string[]));
  });
  after(() => p.close());

  it(`answers ${REQUESTS} random requests without a 500, every error in the envelope`, async () => {
    const r = rng(SEED + 7);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let i = 0; i < REQUESTS; i += 6) {
      const batch = Array.from({ length: 6 }, () => request(r, ids));
      await Promise.all(
        batch.map(async ([method, path, body], j) => {
          const res = await call(t.baseUrl, method, path, key, method === 'GET' ? undefined : body);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const where = `#${i + j} ${method} ${path.slice(0, 120)} ${JSON.stringify(body)?.slice(0, 200)}`;
          // A provider's own error is passed through as it came (its shape, not gatelog's envelope).
          const passedThrough = res.headers.get('x-gatelog-request-id') !== res.headers.get('x-request-id');
          if (passedThrough && res.status >= 400 && res.status < 500)
            assert.equal(typeof res.body?.error?.message, 'string', where);
          // A provider registered above at a closed loopback port cannot be reached: a 502 that says so,
          // then a 503 while its circuit is open.
          else if (
            (res.status === 502 && res.body?.error?.code === 'upstream_unreachable') ||
            (res.status === 503 && res.body?.error?.code === 'provider_unavailable')
          )
            assert.equal(res.body.detail, res.body.error.message, where);
          else if (!passedThrough || res.status >= 500) checkAnswer(res, where, failures);
          if (method === 'POST' && path === '/api/views/' && res.status === 201) ids.views.push(res.body.id as string);
        }),
      );
    }
    assertFuzzAnswers(
      { seed: SEED, sent: REQUESTS, failures, statuses },
      { ok: REQUESTS / 10, refused: REQUESTS / 10 },
    );
    assert.equal((await api(t.baseUrl, 'GET', '/health')).status, 200);
  });
});
