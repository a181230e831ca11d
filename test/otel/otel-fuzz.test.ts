/**
 * Seeded fuzzing of the OpenTelemetry traces route: exports as the GenAI, OpenLLMetry and OpenInference
 * instrumentations send them, with nodes replaced, dropped, renamed or given a NUL, in OTLP/JSON or
 * protobuf, gzip or not, bytes flipped, cut short or spliced with runs of empty spans and deep nesting.
 * Whatever arrives: no 500, every 400 in OTLP's form (google.rpc.Status, in JSON with the envelope),
 * nothing refused by the database, and the service still answers. The seed comes from GATELOG_FUZZ_SEED.
 */
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { NASTY_STRINGS, type Rng, value, assertFuzzAnswers, FUZZ_SEED as SEED } from '../support/fuzz.js';
import { api, startAppWithTenant, type TestApp } from '../support/harness.js';
import { genAiPayload, openInferencePayload, openLlmetryPayload } from '../support/otlp-payloads.js';
import { partialSuccessOf, postTraces, refusalOf, toProtobuf } from '../support/otlp-wire.js';
import { rng } from '../support/rng.js';

const OTLP_REQUESTS = 600;
const OTLP_STYLES = [genAiPayload, openLlmetryPayload, openInferencePayload];

/** An AnyValue of arrays `depth` deep (within what JSON.stringify takes). */
const nestedValue = (depth: number): unknown =>
  depth <= 1 ? { stringValue: 'x' } : { arrayValue: { values: [nestedValue(depth - 1)] } };

/** An OTLP export with a node here and there replaced, dropped, renamed or given a NUL. */
function mutateOtlp(r: Rng, node: unknown): unknown {
  if (r.next() < 0.03) {
    return r.pick([
      () => value(r),
      () => r.pick(NASTY_STRINGS),
      () => 'x\u0000y',
      () => ({}),
      () => [],
      () => nestedValue(r.int(20, 40)),
      () => Array.from({ length: r.int(0, 3) }, () => node),
    ])();
  }
  if (Array.isArray(node)) return node.map((n) => mutateOtlp(r, n));
  if (node !== null && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (r.next() < 0.02) continue;
      out[r.next() < 0.02 ? r.pick(NASTY_STRINGS) : k] = mutateOtlp(r, v);
    }
    return out;
  }
  if (typeof node === 'string' && r.next() < 0.05) return `${node}\u0000${node}`;
  return node;
}

/** Bytes changed here and there: flipped, cut short, or runs of empty spans and deep nesting spliced in. */
function mutateBytes(r: Rng, bytes: Buffer): Buffer {
  const at = () => r.int(0, Math.max(0, bytes.length - 1));
  switch (r.int(0, 4)) {
    case 0: {
      const out = Buffer.from(bytes);
      for (let i = r.int(1, 6); i > 0; i--) out[at()] = r.int(0, 255);
      return out;
    }
    case 1:
      return bytes.subarray(0, at());
    case 2: {
      const i = at();
      return Buffer.concat([
        bytes.subarray(0, i),
        Buffer.alloc(r.int(1, 200), r.pick([0x12, 0x00, 0x0a])),
        bytes.subarray(i),
      ]);
    }
    case 3:
      return Buffer.concat([bytes, r.next() < 0.5 ? Buffer.from('{}]}') : Buffer.from([0x0a, 0xff, 0xff, 0x7f])]);
    default: {
      const i = at();
      return Buffer.concat([bytes.subarray(0, i), Buffer.from('['.repeat(r.int(100, 3000))), bytes.subarray(i)]);
    }
  }
}

function otlpRequest(r: Rng): { type: string; headers: Record<string, string>; body: Buffer } {
  const original = r.pick(OTLP_STYLES)().body;
  const mutated = mutateOtlp(r, original);
  const json = r.next() < 0.5;
  let body: Buffer;
  if (json) body = Buffer.from(JSON.stringify(mutated));
  else {
    try {
      body = toProtobuf(mutated);
    } catch {
      body = toProtobuf(original);
    }
  }
  if (r.next() < 0.3) body = mutateBytes(r, body);
  const headers: Record<string, string> = {};
  const roll = r.next();
  if (roll < 0.25) {
    body = zlib.gzipSync(body);
    headers['content-encoding'] = 'gzip';
  } else if (roll < 0.28) {
    headers['content-encoding'] = r.pick(['gzip', 'br', 'identity']);
  }
  const sent = r.next() < 0.05 ? !json : json;
  return { type: sent ? 'application/json' : 'application/x-protobuf', headers, body };
}

describe(`fuzzing the OpenTelemetry traces route (GATELOG_FUZZ_SEED=${SEED})`, () => {
  let t: TestApp;
  let key: string;
  before(async () => ([t, { key }] = await startAppWithTenant()));
  after(() => t.close());

  it(`answers ${OTLP_REQUESTS} careless and hostile exports without a 500, every 400 in OTLP's form, nothing refused by the database`, async () => {
    const r = rng(SEED);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let i = 0; i < OTLP_REQUESTS; i += 6) {
      const batch = Array.from({ length: Math.min(6, OTLP_REQUESTS - i) }, () => otlpRequest(r));
      await Promise.all(
        batch.map(async ({ type, headers, body }, j) => {
          const where = `#${i + j} ${type} ${JSON.stringify(headers)} ${JSON.stringify(body.subarray(0, 200).toString('latin1'))}`;
          const answer = await postTraces(t.baseUrl, key, body, type, headers);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status >= 500)
            failures.push(`${answer.status} ${where}: ${answer.bytes.toString().slice(0, 200)}`);
          else if (answer.status === 400) {
            try {
              const refusal = refusalOf(answer);
              if (refusal.code !== 3 || !/^The body is not an OTLP trace export: /.test(refusal.message)) {
                failures.push(`400 not in OTLP's form ${where}: ${JSON.stringify(refusal)}`);
              }
            } catch (err) {
              failures.push(`400 unreadable (${(err as Error).message}) ${where}`);
            }
          } else if (answer.status === 200) {
            try {
              partialSuccessOf(answer);
            } catch (err) {
              failures.push(`200 unreadable (${(err as Error).message}) ${where}`);
            }
          } else if (answer.status !== 415) {
            failures.push(`${answer.status} ${where}: ${answer.bytes.toString().slice(0, 200)}`);
          }
        }),
      );
    }
    assertFuzzAnswers(
      { seed: SEED, sent: OTLP_REQUESTS, failures, statuses },
      { ok: OTLP_REQUESTS / 4, refused: OTLP_REQUESTS / 20 },
    );
    assert.equal((await api(t.baseUrl, 'GET', '/health')).status, 200);
    await t.flush();
    const dead = await t.db.db.selectFrom('dead_letters').select('error').limit(3).execute();
    assert.deepEqual(dead, [], `seed ${SEED}: logs refused by the database`);
    const stored = await t.db.db
      .selectFrom('logs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.ok(Number(stored.n) > OTLP_REQUESTS / 2, `${stored.n} spans stored`);
  });
});
