/**
 * Background threads yield the CPU to the event loop: SQLite reader threads run at a lower priority. The
 * threads that write do not: they hold SQLite's one write lock, which others wait for.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { BACKGROUND_NICE } from '../../src/workers/priority.js';
import { testDialect } from '../support/database.js';
import { api, startApp, type TestApp } from '../support/harness.js';

/** CPU time (clock ticks, user and system) of each thread of this process, by thread id. */
function threadTimes(): Map<number, number> {
  const times = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    const fields = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const after = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
    times.set(Number(tid), Number(after[11]) + Number(after[12]));
  }
  return times;
}

/** Nice value of each thread of this process, by thread id. */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): nice is the 19th field of the line.
    nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nices;
}

const linux = process.platform === 'linux';

describe('thread priority', { skip: !linux && 'thread nice values are a Linux feature' }, () => {
  it('lowers the calling thread only', async () => {
    const mainBefore = threadNices().get(process.pid);
    const url = new URL('../../src/workers/priority.js', import.meta.url);
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const fs = require('node:fs');
       import(${JSON.stringify(url.href)}).then(({ lowerThisThreadPriority }) => {
         const lowered = lowerThisThreadPriority();
         parentPort.postMessage({ lowered, tid: Number(fs.readlinkSync('/proc/thread-self').split('/').at(-1)) });
       });
       setTimeout(() => {}, 5000);`,
      { eval: true },
    );
    try {
      const { lowered, tid } = await new Promise<{ lowered: boolean; tid: number }>((resolve) =>
        worker.once('message', resolve),
      );
      assert.equal(lowered, true);
      const nices = threadNices();
      assert.equal(nices.get(tid), BACKGROUND_NICE);
      assert.equal(nices.get(process.pid), mainBefore);
    } finally {
      await worker.terminate();
    }
  });

  describe('of SQLite reader threads', { skip: testDialect !== 'sqlite' && 'reader threads are SQLite only' }, () => {
    let t: TestApp;
    before(async () => (t = await startApp()));
    after(() => t.close());

    it('is lowered once a list has run on one, and the event loop keeps its own', async () => {
      const mainBefore = threadNices().get(process.pid);
      const { key } = await t.tenant();
      const res = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key });
      assert.equal(res.status, 200, res.text);
      const lowered = [...threadNices().values()].filter((nice) => nice === BACKGROUND_NICE);
      assert.ok(lowered.length >= 1, 'no thread of this process runs at the background priority');
      assert.equal(threadNices().get(process.pid), mainBefore);
    });

    it('leaves the bulk-write thread, which holds the write lock, at the normal priority', async () => {
      await sql`create table priority_probe (n integer)`.execute(t.db.bulk);
      const before = threadTimes();
      // Work enough on the bulk connection to stand out: the thread that did it is the bulk thread.
      await sql`with recursive c(n) as (select 1 union all select n + 1 from c where n < 1000000)
        insert into priority_probe select n from c`.execute(t.db.bulk);
      const after = threadTimes();
      const used = [...after].map(([tid, ticks]) => ({ tid, ticks: ticks - (before.get(tid) ?? 0) }));
      const busiest = used.sort((a, b) => b.ticks - a.ticks)[0]!;
      assert.notEqual(busiest.tid, process.pid, 'the write ran on a thread of its own');
      assert.equal(threadNices().get(busiest.tid), 0, 'the thread that writes was lowered');
    });
  });
});
