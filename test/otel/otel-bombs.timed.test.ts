/**
 * OTLP bodies that expand: 20 KB of gzip that holds 10 million empty spans (protobuf, `12 00` each), and
 * the OTLP/JSON form (`{},` each). Counted before they are decoded (docs/api.md "OpenTelemetry",
 * Bounds), they are a quick 400, or a partialSuccess counting every span, while /health keeps answering
 * and memory stays put.
 */
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startAppWithTenant, type TestApp } from '../support/harness.js';
import {
  emptySpansJson,
  emptySpansProtobuf,
  partialSuccessOf,
  postTraces,
  refusalOf,
  type TracesAnswer,
} from '../support/otlp-wire.js';
import { respondsWithin, stallBoundMs } from '../support/responsive.js';

const MB = 1024 * 1024;

describe('OTLP bodies that expand', () => {
  let t: TestApp;
  let key: string;

  before(async () => ([t, { key }] = await startAppWithTenant()));
  after(() => t.close());

  /** Posts `body` gzipped while /health is polled; the answer, how long it took, and /health's slowest. */
  async function bomb(body: Buffer, type: string) {
    const gzipped = zlib.gzipSync(body, { level: 9 });
    const rssBefore = process.memoryUsage().rss;
    let tookMs = 0;
    const { result, slowestMs, runs } = await respondsWithin(t.baseUrl, stallBoundMs(), async () => {
      const started = performance.now();
      const answer: TracesAnswer = await postTraces(t.baseUrl, key, gzipped, type, { 'content-encoding': 'gzip' });
      tookMs = performance.now() - started;
      return answer;
    });
    const grewMb = (process.memoryUsage().rss - rssBefore) / MB;
    return { answer: result, gzipKb: gzipped.length / 1024, tookMs, slowestMs, runs, grewMb };
  }

  const cases = [
    { form: 'protobuf', type: 'application/x-protobuf', body: () => emptySpansProtobuf(10_000_000) },
    { form: 'json', type: 'application/json', body: () => emptySpansJson(6_900_000) },
  ];

  for (const { form, type, body } of cases) {
    it(`${form}: millions of empty spans in 20 MB (gzip: tens of KB) are a quick 400 that holds no one else`, async () => {
      const raw = body();
      assert.ok(raw.length < 20 * MB, 'within the body limit once decompressed');
      const run = await bomb(raw, type);
      assert.ok(run.gzipKb < 100, `${run.gzipKb.toFixed(0)} KB sent`);
      assert.equal(run.answer.status, 400);
      assert.equal(
        refusalOf(run.answer).message,
        'The body is not an OTLP trace export: it holds more than 2000000 values.',
      );
      const took = run.runs.map((ms) => ms.toFixed(0)).join(' and ');
      assert.ok(run.slowestMs < stallBoundMs(), `/health took ${took} ms meanwhile`);
      // Seconds of CPU at most (it was 33 s): the scan stops at the export's bound.
      assert.ok(run.tookMs < stallBoundMs(5000), `answered in ${run.tookMs.toFixed(0)} ms`);
      assert.ok(run.grewMb < 300, `the process grew by ${run.grewMb.toFixed(0)} MB`);
    });
  }

  for (const { form, type } of cases) {
    it(`${form}: 300,000 empty spans are one partialSuccess count, holding no one else`, async () => {
      const raw = form === 'json' ? emptySpansJson(300_000) : emptySpansProtobuf(300_000);
      const run = await bomb(raw, type);
      assert.equal(run.answer.status, 200);
      const partial = partialSuccessOf(run.answer)!;
      assert.equal(partial.rejectedSpans, '300000');
      assert.match(partial.errorMessage, /^spans past the first 10000 of an export are not read \(290000\); /);
      const took = run.runs.map((ms) => ms.toFixed(0)).join(' and ');
      assert.ok(run.slowestMs < stallBoundMs(), `/health took ${took} ms meanwhile`);
    });
  }
});
