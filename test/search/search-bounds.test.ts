/**
 * What one `search` may cost (docs/api.md "Limits", docs/decisions.md "Search: bounded terms"): a term
 * past MAX_SEARCH_TERM_CHARS or a filter past MAX_SEARCH_TERMS terms is a 400 naming the value on every
 * route that takes filters, before anything is read; and the largest search allowed, over a store whose
 * logs hold long runs of one character (where a trigram phrase repeats one trigram hundreds of times),
 * answers with the node's memory bounded. The node's memory is sampled throughout; a runaway kills the
 * test process before it can take the machine with it. On SQLite, a search past its query budget stops
 * reading at once rather than running to its end (src/db/stop-point.ts).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { testDialect } from '../support/database.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { MAX_SEARCH_TERM_CHARS, MAX_SEARCH_TERMS } from '../../src/filters/limits.js';
import { ftsMatch } from '../../src/logs/search/fts-match.js';
import { SEARCH_FIELD_CHARS } from '../../src/logs/search/search-text.js';
import { BACKGROUND_NICE } from '../../src/workers/priority.js';
import { stallBoundMs } from '../support/responsive.js';

const HOUR = 3600_000;
const MB = 1024 * 1024;
/** Past this much growth the test process ends itself: the search ran away. */
const RUNAWAY = 1536 * MB;

/** Runs `work` while sampling the process's resident memory; its peak growth over the start. */
async function sampled<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const start = process.memoryUsage.rss();
  let peak = start;
  const sample = () => {
    const rss = process.memoryUsage.rss();
    peak = Math.max(peak, rss);
    if (rss - start > RUNAWAY) {
      process.stderr.write(`search-bounds: resident memory grew by ${Math.round((rss - start) / MB)} MB: runaway\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  };
  const timer = setInterval(sample, 10);
  try {
    const result = await work();
    sample();
    return { result, growth: peak - start };
  } finally {
    clearInterval(timer);
  }
}

describe('search bounds', () => {
  let t: TestApp;
  let a: Tenant;
  const start = new Date(Date.now() - HOUR).toISOString();
  const end = new Date(Date.now() + HOUR).toISOString();
  const RUN = 'a'.repeat(1_000_000);

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    // Long runs of one character, indexed (search reads each field's first SEARCH_FIELD_CHARS characters):
    // a trigram phrase of `a`s meets `aaa` tens of thousands of times per log.
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: a.key,
      body: [
        ...[1, 2, 3, 4].map((i) => ({ model: 'gpt-4o', custom_identifier: `run-${i}`, input: RUN })),
        { model: 'gpt-4o', custom_identifier: 'plain', input: 'a refund policy', output: 'banana bread' },
      ],
    });
    assert.equal(res.status, 201, res.text);
    await t.flush();
    await t.searchIndexer.catchUp();
  });
  after(() => t.close());

  const list = (search: unknown) =>
    api(t.baseUrl, 'POST', `/api/request-logs/list/?start_time=${start}&end_time=${end}`, {
      key: a.key,
      body: { filters: { search: { value: search } } },
    });
  const found = (res: { body: { results: { custom_identifier: string }[] } }) =>
    res.body.results.map((r) => r.custom_identifier).sort();

  it('answers a 1 MB term with a 400 at once, reading nothing', async (ctx) => {
    for (const size of [64 * 1024, MB]) {
      const { result: res, growth } = await sampled(() => list(['a'.repeat(size)]));
      assert.equal(res.status, 400, res.text.slice(0, 500));
      assert.equal(res.body.error.code, 'value_too_long');
      assert.equal(res.body.error.param, 'filters.search.value.0');
      assert.match(res.body.error.message, new RegExp(`at most ${MAX_SEARCH_TERM_CHARS} characters`));
      ctx.diagnostic(`a ${size / 1024} KB term: memory grew by ${Math.round(growth / MB)} MB`);
      assert.ok(growth < 128 * MB, `memory grew by ${Math.round(growth / MB)} MB`);
    }
    const url = await api(t.baseUrl, 'GET', `/api/request-logs/list/?search=${'b'.repeat(MAX_SEARCH_TERM_CHARS + 1)}`, {
      key: a.key,
    });
    assert.equal(url.status, 400, url.text);
    assert.equal(url.body.error.param, 'search');
  });

  it('answers the largest search allowed over long runs of one character with bounded memory', async (ctx) => {
    // Every term as long as allowed and as many as allowed: one that every run holds, and the rest in a
    // second value that none holds (each ends in another character).
    const longest = 'a'.repeat(MAX_SEARCH_TERM_CHARS);
    const others = Array.from(
      { length: MAX_SEARCH_TERMS - 1 },
      (_, i) => 'a'.repeat(MAX_SEARCH_TERM_CHARS - 1) + String.fromCodePoint(0x62 + i),
    );
    const { result: res, growth } = await sampled(() => list([longest, others.join(' ')]));
    assert.equal(res.status, 200, res.text.slice(0, 500));
    assert.deepEqual(found(res), ['run-1', 'run-2', 'run-3', 'run-4']);
    ctx.diagnostic(`the largest search: memory grew by ${Math.round(growth / MB)} MB`);
    assert.ok(growth < 256 * MB, `memory grew by ${Math.round(growth / MB)} MB`);
    // A term beside a term found through the phrases, a term repeating a trigram: still exact.
    assert.deepEqual(found(await list(['banana refund'])), ['plain']);
    assert.deepEqual(found(await list(['bananas'])), []);
    assert.deepEqual(found(await list([`${'a'.repeat(100)} refund`])), []);
  });

  it('asks the index for each trigram once, and checks what the phrases leave exactly', () => {
    assert.deepEqual(ftsMatch(['refund', 'policy']), { match: '"refund" "policy"', checked: [] });
    assert.deepEqual(ftsMatch(['a'.repeat(1000)]), { match: '"aaa"', checked: ['a'.repeat(1000)] });
    assert.deepEqual(ftsMatch(['banana']), { match: '"banan"', checked: ['banana'] });
    assert.deepEqual(ftsMatch(['aaab', 'aaa', 'ab', 'aaab']), {
      match: '"aaab"',
      checked: ['aaa', 'ab'],
    });
    assert.deepEqual(ftsMatch(['say "hi"']), { match: '"say ""hi"""', checked: [] });
  });

  it('answers 1,001 terms with a 400 naming the value on every route that takes filters', async () => {
    const terms = Array.from({ length: 1001 }, (_, i) => `t${i % 10}`).join(' ');
    const q = `start_time=${start}&end_time=${end}&search=${encodeURIComponent(terms)}`;
    const filters = { search: { value: [terms] } };
    const calls: [method: 'GET' | 'POST', path: string, body: unknown, param: string][] = [
      ['GET', `/api/request-logs/list/?${q}`, undefined, 'search'],
      ['GET', `/api/request-logs/?${q}`, undefined, 'search'],
      ['POST', '/api/request-logs/list/', { filters }, 'filters.search.value.0'],
      ['GET', `/api/request-logs/facets/?${q}`, undefined, 'search'],
      ['POST', '/api/request-logs/facets/', { filters }, 'filters.search.value.0'],
      ['POST', '/api/request-logs/summary/', { filters }, 'filters.search.value.0'],
      ['GET', `/api/request-logs/export/?${q}`, undefined, 'search'],
      ['POST', '/api/request-logs/export/', { filters }, 'filters.search.value.0'],
      ['POST', '/api/request-logs/export/tokens/', { filters }, 'filters.search.value.0'],
      ['GET', `/api/request-logs/stream/?search=${encodeURIComponent(terms)}`, undefined, 'search'],
      [
        'POST',
        '/api/datasets/',
        { name: 'too many terms', start_time: start, end_time: end, initial_log_filters: filters },
        'initial_log_filters.search.value.0',
      ],
    ];
    for (const [method, path, body, param] of calls) {
      const res = await api(t.baseUrl, method, path, { key: a.key, body });
      assert.equal(res.status, 400, `${method} ${path.slice(0, 40)}: ${res.text.slice(0, 300)}`);
      assert.equal(res.body.error.code, 'too_many_terms', path);
      assert.equal(res.body.error.param, param, path);
    }
    const datasets = await api(t.baseUrl, 'GET', '/api/datasets/', { key: a.key });
    assert.equal(datasets.body.count, 0, 'no dataset was made');

    const made = await api(t.baseUrl, 'POST', '/api/datasets/', { key: a.key, body: { name: 'empty' } });
    assert.equal(made.status, 201, made.text);
    const bulk = await api(t.baseUrl, 'POST', `/api/datasets/${made.body.id}/logs/bulk/`, {
      key: a.key,
      body: { start_time: start, end_time: end, filters },
    });
    assert.equal(bulk.status, 400, bulk.text.slice(0, 300));
    assert.equal(bulk.body.error.param, 'filters.search.value.0');

    // The terms of all values count together; as many as allowed is no error.
    const split = Array.from({ length: MAX_SEARCH_TERMS + 1 }, (_, i) => `w${i}`);
    const over = await list([split.slice(0, 20).join(' '), split.slice(20).join(' ')]);
    assert.equal(over.status, 400, over.text);
    assert.equal(over.body.error.param, 'filters.search.value.1');
    const allowed = await list([split.slice(0, 20).join(' '), split.slice(21).join(' ')]);
    assert.equal(allowed.status, 200, allowed.text);
  });
});

/**
 * Threads of this process at a background priority (the SQLite reader threads, src/workers/priority.ts)
 * that are running or waiting for a core: a reader still working, however little CPU a busy machine
 * gives it. Idle threads sleep.
 */
function busyBackgroundThreads(): number {
  let busy = 0;
  for (const tid of fs.readdirSync('/proc/self/task')) {
    // Not this thread, which is running as it reads: under `nice` every thread of the process has at
    // least the background nice value, this one too.
    if (tid === String(process.pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // it ended meanwhile
    }
    // After the command name: state (field 3) … nice (field 19).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[16]) >= BACKGROUND_NICE && (fields[0] === 'R' || fields[0] === 'D')) busy++;
  }
  return busy;
}

// SQLite only: PostgreSQL cancels a statement past its budget on the server (logs/heavy-lists.timed.test.ts).
if (testDialect === 'sqlite')
  describe('a search past its query budget on SQLite', () => {
    let t: TestApp;
    let a: Tenant;
    const start = new Date(Date.now() - HOUR).toISOString();
    const end = new Date(Date.now() + HOUR).toISOString();
    // Terms each found only at the end of long runs of `a`s: every log's check scans its text once per
    // term (tens of milliseconds a log), several seconds for the store. Search reads the first
    // SEARCH_FIELD_CHARS characters of each field, so the runs fill six fields, the terms in the last.
    const terms = Array.from({ length: MAX_SEARCH_TERMS }, (_, i) => `a${(i + 11).toString(36)}`);
    const run = (field: number) => `${'a'.repeat(SEARCH_FIELD_CHARS - 500)} ${field}`;

    before(async () => {
      t = await startApp({ env: { GATELOG_QUERY_TIMEOUT_MS: '1000' } });
      a = await t.tenant();
      const log = {
        model: 'gpt-4o',
        input: run(1),
        output: run(2),
        prompt_messages: [{ role: 'user', content: run(3) }],
        completion_message: { role: 'assistant', content: run(4) },
        tool_calls: [{ id: 'call-1', type: 'function', function: { name: 'f', arguments: run(5) } }],
        error_message: `${run(6)} ${terms.join(' ')}`,
      };
      for (let batch = 0; batch < 4; batch++) {
        const res = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
          key: a.key,
          body: Array.from({ length: 50 }, () => log),
        });
        assert.equal(res.status, 201, res.text);
      }
      await t.flush();
      await t.searchIndexer.catchUp();
    });
    after(() => t.close());

    it('stops reading when the call is answered 503', async (ctx) => {
      const res = await api(t.baseUrl, 'POST', `/api/request-logs/list/?start_time=${start}&end_time=${end}`, {
        key: a.key,
        body: { filters: { search: { value: [terms.join(' ')] } } },
      });
      assert.equal(res.status, 503, res.text.slice(0, 300));
      assert.equal(res.body.error.code, 'query_timeout');
      // The reader thread was ended at the budget: no background thread works on, rather than one
      // reading on for seconds (or minutes, on a busy machine).
      const answered = performance.now();
      for (let idle = 0; idle < 5; idle = busyBackgroundThreads() === 0 ? idle + 1 : 0) {
        const bound = stallBoundMs(5000);
        assert.ok(performance.now() - answered < bound, `a reader thread still reads ${bound} ms after the 503`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      ctx.diagnostic(`no reader thread reads ${Math.round(performance.now() - answered)} ms after the 503`);
    });
  });
