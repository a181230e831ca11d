/**
 * Many large logs (as aborted long streams leave: a long answer in `output` and again in
 * `completion_message`) reach the search indexer while logs keep coming: the writer never waits behind
 * it — /health stays ok and each new log is in the list within a second — and search finds the words of
 * each field's first SEARCH_FIELD_CHARS characters (docs/api.md "Filter language"), not the ones past it.
 *
 * The case was 300 logs of about 2 MB each (621 MB); this writes GATELOG_TEST_LARGE_LOGS logs
 * of 2 × 1 MB: 100 by default (200 MB of log text, a minute on a quiet machine; the logs are written and
 * indexed at the pace of the new logs between them), 300 for the case.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { stallBoundMs } from '../support/responsive.js';
import { readWatermark } from '../../src/logs/search/search-store.js';
import { SEARCH_FIELD_CHARS } from '../../src/logs/search/search-text.js';
import { listedIdentifiers, highestLogId } from '../support/logs-api.js';

const LOGS = Number(process.env.GATELOG_TEST_LARGE_LOGS ?? 100);
const ANSWER_CHARS = 1024 * 1024;
/** Logs per logging-API call: two 1 MB copies each, under the 20 MB body limit. */
const PER_CALL = 8;

describe('search index: many large logs while logs keep coming', () => {
  let t: TestApp;
  let a: Tenant;
  const tag = crypto.randomBytes(3).toString('hex');
  const head = (i: number) => `headword${tag}x${i}`;
  const tail = (i: number) => `tailword${tag}x${i}`;

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const filler = 'the model kept talking about nothing in particular '.repeat(ANSWER_CHARS / 51);
    for (let first = 0; first < LOGS; first += PER_CALL) {
      const logs = [];
      for (let i = first; i < Math.min(LOGS, first + PER_CALL); i++) {
        const answer = `${head(i)} ${filler} ${tail(i)}`;
        logs.push({
          model: 'gpt-4o',
          custom_identifier: `large-${i}`,
          stream: true,
          status_code: 499,
          input: [{ role: 'user', content: `tell me a long story, number ${i}` }],
          output: answer,
          completion_message: { role: 'assistant', content: answer },
        });
      }
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', { key: a.key, body: { logs } });
      assert.equal(res.status, 201, res.text.slice(0, 300));
    }
  });
  after(() => t.close());

  const list = (query: string) => listedIdentifiers(t, a, query);
  const maxId = () => highestLogId(t);

  it('keeps /health ok and new logs visible within a second while it indexes them', async () => {
    const target = await maxId();
    // The list's first call starts its reader thread: not what is measured here.
    await list('custom_identifier=none');
    const visibleBound = stallBoundMs(1000);
    const health: { status: number; body: string }[] = [];
    let done = false;
    // /health throughout, every 50 ms.
    const polling = (async () => {
      while (!done) {
        const res = await fetch(`${t.baseUrl}/health`);
        const body = await res.text();
        health.push({ status: res.status, body });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    const started = performance.now();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const visible: number[] = [];
    t.searchIndexer.start();
    try {
      const deadline = Date.now() + 240_000;
      let n = 0;
      while ((await readWatermark(t.db.db)) < target) {
        assert.ok(Date.now() < deadline, 'the indexer reached the large logs');
        // A new log: written (the logging API answers after the commit), then looked for in the list.
        const id = `small-${n++}`;
        const writing = performance.now();
        const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
          key: a.key,
          body: { model: 'gpt-4o', custom_identifier: id, input: `small prompt ${id}`, output: 'short answer' },
        });
        assert.equal(res.status, 201, res.text);
        while ((await list(`custom_identifier=${id}`)).length === 0) {
          assert.ok(performance.now() - writing < 10_000, `${id} visible`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        visible.push(performance.now() - writing);
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
        // Past the indexer's idle wait (200 ms), so it works between these writes.
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    } finally {
      done = true;
      await polling;
    }
    const indexingMs = performance.now() - started;
    await t.searchIndexer.stop();
    const wal = t.db.dialect === 'sqlite' ? fs.statSync(`${t.database.url}-wal`, { throwIfNoEntry: false }) : undefined;
    const slowest = Math.max(...visible);
    console.log(
      `${LOGS} large logs indexed in ${(indexingMs / 1000).toFixed(1)} s; ${visible.length} new logs, slowest visible after ` +
        `${slowest.toFixed(0)} ms (bound ${visibleBound}); ${health.length} /health answers; ` +
        `RSS ${(rssBefore / 2 ** 20).toFixed(0)} → peak ${(rssPeak / 2 ** 20).toFixed(0)} MB` +
        (wal ? `; WAL ${(wal.size / 2 ** 20).toFixed(0)} MB` : ''),
    );
    const bad = health.filter((h) => h.status !== 200 || JSON.parse(h.body).status !== 'ok');
    assert.deepEqual(bad.slice(0, 3), [], `${bad.length} of ${health.length} /health answers were not ok`);
    assert.ok(visible.length > 0);
    assert.ok(
      slowest < visibleBound,
      `a new log took ${slowest.toFixed(0)} ms to be visible (${visible.map(Math.round).join(', ')})`,
    );
  });

  it("finds the words of each field's first characters, not the ones past them", async () => {
    await t.searchIndexer.catchUp();
    for (const i of [0, Math.floor(LOGS / 2), LOGS - 1]) {
      assert.deepEqual(await list(`search=${head(i)}`), [`large-${i}`], `log ${i}: a word at the start`);
      assert.deepEqual(await list(`search=${tail(i)}`), [], `log ${i}: a word ${ANSWER_CHARS} characters in`);
    }
    assert.ok(ANSWER_CHARS > SEARCH_FIELD_CHARS);
    assert.deepEqual(await list(`search=${encodeURIComponent('small prompt small-0')}`), ['small-0']);
  });
});
