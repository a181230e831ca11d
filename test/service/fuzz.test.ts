/**
 * Seeded fuzzing of the routes a client reaches most: random list (GET and POST), create, batch and
 * embeddings requests, and speech-to-text forms, careless and hostile. Whatever arrives: no 500, every error in the envelope,
 * and the service still answers afterwards. The seed comes from GATELOG_FUZZ_SEED (printed on failure).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { OPERATORS } from '../../src/filters/types.js';
import { api, type TestApp } from '../support/harness.js';
import { DATASET_LOG_FIELDS } from '../../src/datasets/fields.js';
import { TRANSCRIPTION_FIELDS } from '../../src/gateway/transcription/request.js';
import type { ProxyTestApp } from '../support/proxy-app.js';
import { rng } from '../support/rng.js';
import { AUDIO_FIXTURES, audioPath } from '../support/audio.js';
import {
  answersIn,
  checkAnswer,
  filters,
  listQuery,
  logBody,
  NASTY_STRINGS,
  pathSegment,
  type Rng,
  scalar,
  value,
  FUZZ_SEED as SEED,
  startFuzzTarget,
  assertFuzzAnswers,
} from '../support/fuzz.js';

const REQUESTS = 2500;

describe(`fuzzing the public routes (GATELOG_FUZZ_SEED=${SEED})`, () => {
  let p: ProxyTestApp;
  let t: TestApp;
  let key: string;
  before(async () => ({ p, t, key } = await startFuzzTarget()));
  after(() => p.close());

  it(`answers ${REQUESTS} random requests without a 500, every error in the envelope`, async () => {
    const r = rng(SEED);
    const requests: [string, string, unknown][] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const kind = r.int(0, 5);
      if (kind === 0) requests.push(['GET', `/api/request-logs/list/?${listQuery(r)}`, undefined]);
      else if (kind === 1) requests.push(['POST', `/api/request-logs/list/?${listQuery(r)}`, { filters: filters(r) }]);
      else if (kind === 2) requests.push(['POST', '/api/request-logs/create/', logBody(r)]);
      else if (kind === 3) {
        const logs = Array.from({ length: r.int(0, 4) }, () => logBody(r));
        requests.push(['POST', '/api/request-logs/batch/', r.next() < 0.5 ? logs : { logs }]);
      } else if (kind === 4) {
        const body = {
          model: r.next() < 0.7 ? 'text-embedding-3-small' : scalar(r),
          input: r.next() < 0.6 ? r.pick(NASTY_STRINGS.filter(Boolean)) : value(r),
          ...(r.next() < 0.3
            ? { [r.pick(['metadata', 'dimensions', 'encoding_format', 'disable_log'])]: value(r) }
            : {}),
        };
        requests.push(['POST', '/api/embeddings', body]);
      } else {
        requests.push([
          r.pick(['GET', 'PATCH', 'DELETE']),
          `/api/request-logs/${pathSegment(String(scalar(r)))}/`,
          value(r),
        ]);
      }
    }
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    // A few at a time, as clients do.
    for (let i = 0; i < requests.length; i += 8) {
      await Promise.all(
        requests.slice(i, i + 8).map(async ([method, path, body], j) => {
          const res = await api(t.baseUrl, method, path, {
            key,
            body: method === 'GET' || body === undefined ? undefined : body,
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          checkAnswer(
            res,
            `#${i + j} ${method} ${path.slice(0, 120)} ${JSON.stringify(body)?.slice(0, 200)}`,
            failures,
          );
        }),
      );
    }
    assertFuzzAnswers(
      { seed: SEED, sent: REQUESTS, failures, statuses },
      { ok: REQUESTS / 10, refused: REQUESTS / 10 },
    );
    const health = await api(t.baseUrl, 'GET', '/health');
    assert.equal(health.status, 200);
  });
});

const FORM_NAMES = [
  ...TRANSCRIPTION_FIELDS,
  'timestamp_granularities[]',
  'metadata',
  'metadata[a]',
  'metadata[a][b]',
  'metadata[]',
  'customer_credentials',
  'customer_credentials[openai]',
  'customer_credentials[openai][api_key]',
  'disable_log',
  'request_breakdown',
  'customer_identifier',
  '__proto__[polluted]',
  'constructor[prototype][polluted]',
  'toString',
  'a[][]',
  '[]',
  'a]b[',
  ...NASTY_STRINGS.filter((s) => s.length < 90),
];
const PLATFORM_FORM_FIELDS = [
  'customer_identifier',
  'customer_email',
  'thread_identifier',
  'metadata[a]',
  'metadata[a][b]',
  ...NASTY_STRINGS.filter((s) => s.length < 90).map((s) => `metadata[${s}]`),
];
const FORM_VALUES = ['whisper-1', 'json', 'text', 'srt', 'verbose_json', 'vtt', 'word', 'segment', 'en', '0.5'];

/** A multipart body, careless or hostile: parts in any order, wrong boundaries, cut short, too many parts. */
function formRequest(r: Rng, fixtures: readonly Buffer[]): { contentType: string; body: Buffer } {
  const boundary = `fuzz${r.int(0, 1e9)}`;
  const parts: Buffer[] = [];
  const field = (name: string, value: string) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  const file = (name: string, filename: string, bytes: Buffer) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
          `Content-Type: ${r.pick(['audio/wav', 'application/octet-stream', 'text/plain'])}\r\n\r\n`,
      ),
      bytes,
      Buffer.from('\r\n'),
    ]);
  const audio = () => {
    const bytes = r.pick(fixtures);
    const choice = r.int(0, 3);
    if (choice === 0) return bytes.subarray(0, r.int(0, bytes.length));
    if (choice === 1) return Buffer.from(Array.from({ length: r.int(0, 3000) }, () => r.int(0, 255)));
    return bytes;
  };
  const mode = r.next();
  if (mode < 0.35) {
    // Nearly right: the file and model, with a few random fields around them.
    parts.push(file('file', r.pick(['a.wav', 'a.mp3', 'a', '']), r.pick(fixtures)), field('model', 'whisper-1'));
  }
  if (mode < 0.2) {
    // A right form whose platform fields hold hostile text (NUL, lone surrogates, long values): each is
    // refused, or the call is served and its log stored.
    for (let i = r.int(1, 3); i > 0; i--) parts.push(field(r.pick(PLATFORM_FORM_FIELDS), r.pick(NASTY_STRINGS)));
    if (r.next() < 0.3)
      parts.push(field('metadata', JSON.stringify({ [r.pick(NASTY_STRINGS)]: r.pick(NASTY_STRINGS) })));
  }
  const count = mode < 0.2 ? 0 : r.next() < 0.05 ? 260 : r.int(0, 6);
  for (let i = 0; i < count; i++) {
    const name = r.pick(FORM_NAMES);
    if (r.next() < 0.15) parts.push(file(name, r.pick(['x.wav', 'x.ogg', 'x.txt', 'y']), audio()));
    else parts.push(field(name, String(r.next() < 0.5 ? r.pick(FORM_VALUES) : scalar(r))));
  }
  if (r.next() < 0.05) parts.push(Buffer.from(`--${boundary}\r\nX-Broken: yes\r\n\r\nno disposition\r\n`));
  for (let i = parts.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [parts[i], parts[j]] = [parts[j], parts[i]];
  }
  if (r.next() > 0.05) parts.push(Buffer.from(`--${boundary}--\r\n`));
  let body = Buffer.concat(parts);
  if (r.next() < 0.1) body = body.subarray(0, r.int(0, body.length));
  const contentType = r.pick([
    `multipart/form-data; boundary=${boundary}`,
    `multipart/form-data; boundary=${boundary}`,
    `multipart/form-data; boundary=${boundary}`,
    `multipart/form-data; boundary=other${boundary}`,
    'multipart/form-data',
    'application/octet-stream',
  ]);
  return { contentType, body };
}

describe(`fuzzing the speech-to-text form (GATELOG_FUZZ_SEED=${SEED})`, () => {
  let p: ProxyTestApp;
  let t: TestApp;
  let key: string;
  before(async () => ({ p, t, key } = await startFuzzTarget()));
  after(() => p.close());

  it('answers 600 random forms without a 500, every error in the envelope, and pollutes nothing', async () => {
    const r = rng(SEED + 1);
    const fixtures = AUDIO_FIXTURES.map((f) => fs.readFileSync(audioPath(f.file)));
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 600; i += 6) {
      await Promise.all(
        Array.from({ length: 6 }, async (_, j) => {
          const { contentType, body } = formRequest(r, fixtures);
          const path = r.pick(['/api/audio/transcriptions', '/api/audio/transcription']);
          const where = `#${i + j} ${contentType} ${JSON.stringify(body.subarray(0, 300).toString('latin1'))}`;
          // A form that is never answered is a failure of its own, named, not a test that runs out of time.
          const res = await fetch(`${t.baseUrl}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
            body,
            signal: AbortSignal.timeout(15_000),
          }).catch((err: Error) => err);
          if (res instanceof Error) {
            failures.push(`no answer (${res.name}) ${where}`);
            return;
          }
          const text = await res.text();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status >= 500) failures.push(`${res.status} ${where}: ${text.slice(0, 200)}`);
          else if (res.status >= 400) {
            const parsed = JSON.parse(text) as { detail?: string; error?: { message?: string } };
            if (typeof parsed.error?.message !== 'string' || parsed.detail !== parsed.error.message) {
              failures.push(`no envelope for ${res.status} ${where}: ${text.slice(0, 200)}`);
            }
          }
        }),
      );
    }
    assert.deepEqual(failures.slice(0, 10), [], `seed ${SEED}: ${failures.length} failures`);
    const count = (from: number, to: number) => answersIn(statuses, from, to);
    assert.ok(count(200, 300) >= 5, `2xx: ${count(200, 300)} of 600`);
    assert.ok(count(400, 500) >= 60, `4xx: ${count(400, 500)} of 600`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no form field reached Object.prototype');
    assert.equal((await api(t.baseUrl, 'GET', '/health')).status, 200);
    // Every call answered was logged: none of their logs was refused by the database.
    await t.flush();
    const dead = await t.db.db.selectFrom('dead_letters').select('error').limit(3).execute();
    assert.deepEqual(dead, [], `seed ${SEED}: logs refused by the database`);
  });
});

const DATASET_REQUESTS = 1200;
const DATASET_FIELD_NAMES = [...DATASET_LOG_FIELDS.fields.keys()];

/** A time: mostly a real one within the last two hours, sometimes anything. */
const someTime = (r: Rng) => (r.next() < 0.75 ? new Date(Date.now() - r.int(0, 7200) * 1000).toISOString() : scalar(r));

/** Dataset-log filters: the dataset fields, metadata, and nonsense. */
function datasetFilters(r: Rng): unknown {
  if (r.next() < 0.1) return value(r);
  const result: Record<string, unknown> = {};
  for (let i = r.int(0, 3); i > 0; i--) {
    const name = r.pick([
      () => r.pick(DATASET_FIELD_NAMES),
      () => `metadata__${r.pick(NASTY_STRINGS)}`,
      () => r.pick(NASTY_STRINGS),
    ])();
    result[name] = {
      operator: r.next() < 0.8 ? r.pick(OPERATORS) : scalar(r),
      value: r.next() < 0.7 ? Array.from({ length: r.int(0, 3) }, () => scalar(r)) : value(r),
    };
  }
  return result;
}

describe(`fuzzing the dataset routes (GATELOG_FUZZ_SEED=${SEED})`, () => {
  let p: ProxyTestApp;
  let t: TestApp;
  let key: string;
  const logIds: string[] = [];
  const datasets = new Map<string, string[]>();

  before(async () => {
    ({ p, t, key } = await startFuzzTarget());
    await api(t.baseUrl, 'POST', '/api/evaluators/', { key, body: { name: 'quality' } });
    const logs = Array.from({ length: 40 }, (_, i) => ({
      model: ['gpt-4o', 'gpt-4o-mini', 'o1'][i % 3],
      prompt_messages: [{ role: 'user', content: `question ${i}` }],
      completion_message: { role: 'assistant', content: `answer ${i}` },
      metadata: { team: ['a', 'b'][i % 2] },
      status_code: i % 7 === 0 ? 500 : 200,
    }));
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key, body: { logs } });
    assert.equal(res.status, 201, res.text);
    logIds.push(...(res.body.unique_ids as string[]));
  });
  after(() => p.close());

  it(`answers ${DATASET_REQUESTS} random dataset requests without a 500, and every dataset keeps a true count`, async () => {
    const r = rng(SEED + 2);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let made = 0;
    const anyId = () => pathSegment(String(scalar(r)));
    const datasetId = () => (datasets.size > 0 && r.next() < 0.85 ? r.pick([...datasets.keys()]) : anyId());
    const datasetLogId = (id: string) => {
      const known = datasets.get(id) ?? [];
      return known.length > 0 && r.next() < 0.8 ? r.pick(known) : anyId();
    };
    const request = (): [string, string, unknown] => {
      const id = datasetId();
      const base = `/api/datasets/${id}`;
      switch (r.int(0, 11)) {
        case 0: {
          const body: Record<string, unknown> = { name: r.next() < 0.85 ? `fuzz ${r.int(0, 1e6)}` : scalar(r) };
          if (r.next() < 0.6) body.start_time = someTime(r);
          if (r.next() < 0.3) body.end_time = someTime(r);
          if (r.next() < 0.4) body.initial_log_filters = filters(r);
          if (r.next() < 0.4) body.sampling = r.next() < 0.7 ? r.int(0, 100) : scalar(r);
          if (r.next() < 0.2) body.description = scalar(r);
          if (r.next() < 0.05) body[r.pick(NASTY_STRINGS)] = value(r);
          return ['POST', '/api/datasets/', r.next() < 0.05 ? value(r) : body];
        }
        case 1:
          return ['GET', `/api/datasets/?page=${String(scalar(r))}&page_size=${String(scalar(r))}`, undefined];
        case 2:
          return [r.next() < 0.8 ? 'GET' : 'DELETE', `${base}/`, undefined];
        case 3:
          return ['PATCH', `${base}/`, r.next() < 0.7 ? { name: scalar(r), description: scalar(r) } : value(r)];
        case 4:
        case 5: {
          const ids = Array.from({ length: r.int(0, 6) }, () => (r.next() < 0.8 ? r.pick(logIds) : scalar(r)));
          return ['POST', `${base}/logs/`, r.next() < 0.9 ? { log_ids: ids } : value(r)];
        }
        case 6:
          return [
            'POST',
            `${base}/logs/bulk/`,
            { start_time: someTime(r), end_time: someTime(r), filters: filters(r), sampling_percentage: scalar(r) },
          ];
        case 7:
          return [
            'DELETE',
            `${base}/logs/delete/`,
            r.next() < 0.2
              ? { is_deleting_all_logs: r.next() < 0.5 ? true : scalar(r) }
              : { filters: datasetFilters(r) },
          ];
        case 8: {
          const query = new URLSearchParams();
          for (let i = r.int(0, 4); i > 0; i--) {
            const name = r.pick([
              'page',
              'page_size',
              'order_by',
              'sort_by',
              'fetch_filters',
              r.pick(DATASET_FIELD_NAMES),
            ]);
            query.append(name, String(r.next() < 0.5 ? r.pick(DATASET_FIELD_NAMES) : scalar(r)));
          }
          return ['GET', `${base}/logs/list/?${query}`, undefined];
        }
        case 9:
          return ['POST', `${base}/logs/list/?fetch_filters=${String(r.next() < 0.5)}`, { filters: datasetFilters(r) }];
        case 10: {
          const method = r.pick(['GET', 'PATCH', 'DELETE']);
          const body = {
            [r.pick(['annotation_status', 'metadata', 'input', 'output', 'model'])]: value(r),
            ...(r.next() < 0.5 ? { annotation_status: r.pick(['completed', 'pending', '']) } : {}),
          };
          return [method, `${base}/logs/${datasetLogId(id)}/`, method === 'PATCH' ? body : undefined];
        }
        default:
          return [
            'POST',
            `${base}/logs/${datasetLogId(id)}/scores/`,
            { evaluator_slug: r.next() < 0.8 ? 'quality' : scalar(r), numerical_value: scalar(r) },
          ];
      }
    };
    for (let i = 0; i < DATASET_REQUESTS; i += 6) {
      const batch = Array.from({ length: 6 }, request);
      await Promise.all(
        batch.map(async ([method, path, body], j) => {
          const res = await api(t.baseUrl, method, path, { key, body: method === 'GET' ? undefined : body });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          checkAnswer(
            res,
            `#${i + j} ${method} ${path.slice(0, 120)} ${JSON.stringify(body)?.slice(0, 200)}`,
            failures,
          );
          // What the next requests may name: datasets made and removed, dataset logs added.
          const id = /^\/api\/datasets\/([^/?]+)\//.exec(path)?.[1];
          if (method === 'POST' && path === '/api/datasets/' && res.status === 201) {
            datasets.set(res.body.id, []);
            made++;
          } else if (method === 'DELETE' && id && path === `/api/datasets/${id}/` && res.status < 300)
            datasets.delete(id);
          else if (id && path.endsWith('/logs/') && res.status === 201)
            datasets.get(id)?.push(...(res.body.ids as string[]));
        }),
      );
    }
    assertFuzzAnswers(
      { seed: SEED, sent: DATASET_REQUESTS, failures, statuses },
      { ok: DATASET_REQUESTS / 10, refused: DATASET_REQUESTS / 10 },
    );
    // Some seeds delete every dataset they made; the counts are checked on those left.
    assert.ok(made > 0, 'some datasets were made');
    // Whatever was done to them, each dataset's log_count is the number of logs it lists.
    for (const id of datasets.keys()) {
      const dataset = await api(t.baseUrl, 'GET', `/api/datasets/${id}/`, { key });
      const listed = await api(t.baseUrl, 'GET', `/api/datasets/${id}/logs/list/?page_size=1`, { key });
      assert.equal(dataset.body.log_count, listed.body.count, `dataset ${id}: log_count against its list`);
    }
    assert.equal((await api(t.baseUrl, 'GET', '/health')).status, 200);
  });
});
