/**
 * The search indexer when the database refuses: a batch whose insert fails is retried row by row, the
 * log whose row still fails is set aside (counted in /health, still found by search, logged once) and
 * the rest of its batch is indexed; a failure of the database itself is retried with a growing pause
 * and logged once until it works again. And the prefix the SQL reads gives the same text as the whole
 * field read in JavaScript (code points, not UTF-16 units).
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { api, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';
import { readWatermark, searchSourceColumns } from '../../src/logs/search/search-store.js';
import {
  SEARCH_COLUMNS,
  SEARCH_FIELD_CHARS,
  type SearchSource,
  searchText,
} from '../../src/logs/search/search-text.js';
import { foundBySearch, writeLogBatch, highestLogId } from '../support/logs-api.js';

const POISON = 'poisonedword';

describe('search indexer: what the database refuses', () => {
  let t: TestApp;
  let a: Tenant;
  const lines: Record<string, unknown>[] = [];
  before(async () => ([t, a] = await startAppWithTenant({ logLines: lines })));
  after(() => t.close());

  const found = (search: string) => foundBySearch(t, a, search);
  const write = (logs: Record<string, unknown>[]) => writeLogBatch(t, a, logs);
  const maxId = () => highestLogId(t);
  const idOf = async (customIdentifier: string) =>
    Number(
      (
        await t.db.db
          .selectFrom('logs')
          .select('id')
          .where('custom_identifier', '=', customIdentifier)
          .executeTakeFirstOrThrow()
      ).id,
    );
  const indexedIds = async () => {
    const key = sql.ref(t.db.dialect === 'postgres' ? 'log_id' : 'rowid');
    const res = await sql<{ id: number }>`select ${key} as id from log_search order by 1`.execute(t.db.db);
    return res.rows.map((r) => Number(r.id));
  };
  const health = async () => {
    const res = await api(t.baseUrl, 'GET', '/health');
    assert.equal(res.status, 200, res.text);
    return res.body.search_index as { state: string; set_aside: number };
  };
  const linesSaying = (text: string) => lines.filter((l) => String(l.msg).includes(text));

  it('reads the same text from the SQL prefix as from the whole field', async () => {
    // Past the cap in code points and in UTF-16 units alike: emoji are two units, one code point.
    const long = `${'🙂 word '.repeat(SEARCH_FIELD_CHARS / 4)}tailword`;
    const answer = { role: 'assistant', content: `é${'ü'.repeat(SEARCH_FIELD_CHARS)}` };
    // The answer in output (a response around it) and in completion_message: cut at different places.
    const output = { id: 'resp-1', choices: [{ index: 0, message: answer }] };
    await write([{ model: 'm', custom_identifier: 'prefix', input: long, output, completion_message: answer }]);
    const id = await idOf('prefix');
    const whole = await t.db.db
      .selectFrom('logs')
      .select([...SEARCH_COLUMNS])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const prefix = await t.db.db
      .selectFrom('logs')
      .select(searchSourceColumns())
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const text = searchText(prefix as SearchSource);
    assert.equal(text, searchText(whole as SearchSource));
    assert.ok(!text.includes('tailword'), 'a word past the cap is not searchable');
    // The answer, in output and completion_message, is in the text once: the longer of its two prefixes.
    const answers = text.split('\n').filter((line) => line.startsWith('éü'));
    assert.equal(answers.length, 1);
    assert.ok(answers[0].length > SEARCH_FIELD_CHARS - 40, `${answers[0].length} characters`);
  });

  it('sets aside a log whose row the database refuses, indexes the rest of its batch, and still finds it', async () => {
    // A real refusal: the index table checks its text (PostgreSQL: a constraint; SQLite, whose FTS5
    // table takes no constraint: a plain table of the same columns, put back as FTS5 afterwards).
    if (t.db.dialect === 'postgres') {
      await sql`alter table log_search add constraint no_poison check (position(${sql.lit(POISON)} in text) = 0)`.execute(
        t.db.db,
      );
    } else {
      await sql`drop table log_search`.execute(t.db.db);
      await sql`create table log_search (rowid integer primary key, text text not null check (instr(text, ${sql.lit(POISON)}) = 0))`.execute(
        t.db.db,
      );
    }
    await t.searchIndexer.catchUp();
    const before = await indexedIds();
    await write([
      { model: 'm', custom_identifier: 'ok-1', input: 'first harmless prompt' },
      { model: 'm', custom_identifier: 'bad', input: `a prompt with a ${POISON} inside` },
      { model: 'm', custom_identifier: 'ok-2', input: 'second harmless prompt' },
    ]);
    await t.searchIndexer.catchUp();
    assert.equal(await readWatermark(t.db.db), await maxId(), 'the watermark went past the refused log');
    const bad = await idOf('bad');
    assert.deepEqual(await indexedIds(), [...before, await idOf('ok-1'), await idOf('ok-2')]);
    const aside = await t.db.db.selectFrom('search_set_aside').selectAll().execute();
    assert.deepEqual(
      aside.map((r) => Number(r.log_id)),
      [bad],
    );
    assert.match(aside[0].error, /constraint|check/i);
    assert.deepEqual(await health(), { state: 'ok', set_aside: 1 });
    const warned = linesSaying('refused the search text');
    assert.equal(warned.length, 1, 'logged once');
    assert.deepEqual(warned[0].log_ids, [bad]);

    if (t.db.dialect === 'sqlite') {
      await sql`alter table log_search rename to log_search_plain`.execute(t.db.db);
      await sql`create virtual table log_search using fts5(text, tokenize = 'trigram case_sensitive 1')`.execute(
        t.db.db,
      );
      await sql`insert into log_search (rowid, text) select rowid, text from log_search_plain`.execute(t.db.db);
      await sql`drop table log_search_plain`.execute(t.db.db);
    } else {
      await sql`alter table log_search drop constraint no_poison`.execute(t.db.db);
    }
    // Below the watermark and not in the index, it is still found: search reads it directly.
    assert.deepEqual(await found(POISON), ['bad']);
    assert.deepEqual(await found('prompt'), ['bad', 'ok-1', 'ok-2']);
    assert.deepEqual(await found('harmless'), ['ok-1', 'ok-2']);

    // Deleted, it leaves the set-aside logs.
    const unique = (
      await t.db.db.selectFrom('logs').select('unique_id').where('id', '=', bad).executeTakeFirstOrThrow()
    ).unique_id;
    const deleted = await api(t.baseUrl, 'DELETE', `/api/request-logs/${unique}/`, { key: a.key });
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(await t.searchIndexer.refreshSetAside(), 0);
    assert.deepEqual(await health(), { state: 'ok', set_aside: 0 });
  });

  it('retries a failing database with a growing pause, logged once, and goes on when it works again', async () => {
    await write([{ model: 'm', custom_identifier: 'while-failing', input: 'written while indexing fails' }]);
    // Every batch fails, whatever its logs: the index table is gone (so every row fails alone too, and
    // none may be set aside for it).
    await sql`alter table log_search rename to log_search_away`.execute(t.db.db);
    const indexer = t.searchIndexer;
    const started = performance.now();
    indexer.start();
    try {
      const deadline = Date.now() + 20_000;
      while (indexer.failures < 3) {
        assert.ok(Date.now() < deadline, `three failed tries (${indexer.failures})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Tries at 0, 0.5 s and 1.5 s at the earliest (the pause doubles from 250 ms); every 250 ms, the
      // third would have come at 0.5 s.
      assert.ok(performance.now() - started >= 1400, `the pause grows (${Math.round(performance.now() - started)} ms)`);
      assert.deepEqual(await health(), { state: 'retrying', set_aside: 0 });
      assert.equal(await t.searchIndexer.refreshSetAside(), 0, 'no log set aside for a missing table');
      assert.equal(linesSaying('search indexing failed').length, 1, 'logged once');

      await sql`alter table log_search_away rename to log_search`.execute(t.db.db);
      while (indexer.failures > 0 || (await readWatermark(t.db.db)) < (await maxId())) {
        assert.ok(Date.now() < deadline, 'indexing resumed');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal((await health()).state, 'ok');
      assert.equal(linesSaying('search indexing works again').length, 1);
      assert.equal(linesSaying('search indexing failed').length, 1, 'still logged once');
      assert.deepEqual(await found('indexing fails'), ['while-failing']);
    } finally {
      await indexer.stop();
    }
  });
});
