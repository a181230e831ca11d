/** GET|POST /api/request-logs/export/: every matching log, streamed as JSON Lines or CSV. */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { csvField, csvLine } from '../../src/util/csv.js';
import { revokeApiKey } from '../../src/auth/api-keys.js';
import { EXPORT_CHUNK } from '../../src/http/routes/export.js';
import { hashExportToken } from '../../src/exports/token-repository.js';
import { LOG_ITEM_FIELDS } from '../../src/logs/present.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { postLogsInBatches } from '../support/logs-api.js';

const TOTAL = EXPORT_CHUNK * 2 + 234;

describe('export of logs', () => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;
  const start = new Date(Date.now() - 3_600_000).toISOString();

  const logLines: Record<string, unknown>[] = [];

  before(async () => {
    t = await startApp({ logLines });
    a = await t.tenant();
    b = await t.tenant();
    const base = Date.now() - 30 * 60_000;
    const all = Array.from({ length: TOTAL }, (_, i) => ({
      model: i % 2 === 0 ? 'even-model' : 'odd-model',
      input: i === 1 ? 'has, a comma and a "quote"\nand a line' : `input ${i}`,
      customer_identifier: i === 3 ? '=HYPERLINK("x")' : `customer-${i}`,
      output: `output ${i}`,
      metadata: { n: i, group: i % 5 === 0 ? 'fives' : 'rest' },
      timestamp: new Date(base + i * 1000).toISOString(),
    }));
    await postLogsInBatches(t, a, all, 1000);
  });
  after(() => t.close());

  const exported = (tenant: Tenant, query: string, init: RequestInit = {}) =>
    fetch(`${t.baseUrl}/api/request-logs/export/?start_time=${start}${query}`, {
      ...init,
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    });

  it('streams every matching log once, newest first, across chunks: the same logs the list pages hold', async () => {
    const res = await exported(a, '');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="gatelog-logs-.*\.jsonl"$/);
    const lines = (await res.text()).split('\n').filter(Boolean);
    assert.equal(lines.length, TOTAL);
    const items = lines.map((l) => JSON.parse(l) as { unique_id: string; metadata: { n: number }; model: string });
    assert.equal(new Set(items.map((i) => i.unique_id)).size, TOTAL, 'no log twice');
    assert.deepEqual(
      items.map((i) => i.metadata.n),
      Array.from({ length: TOTAL }, (_, i) => TOTAL - 1 - i),
      'newest first',
    );
    const listed: string[] = [];
    for (let page = 1; page <= 2; page++) {
      const list = await api(
        t.baseUrl,
        'GET',
        `/api/request-logs/list/?start_time=${start}&page_size=1000&page=${page}`,
        {
          key: a.key,
        },
      );
      listed.push(...(list.body.results as { unique_id: string }[]).map((r) => r.unique_id));
    }
    assert.deepEqual(
      items.map((i) => i.unique_id),
      listed,
    );
  });

  it('takes body and URL filters, and writes CSV with the chosen fields, quoted and formula-safe', async () => {
    const res = await exported(a, '&format=csv&fields=unique_id,model,customer_identifier,input,metadata&group=rest', {
      method: 'POST',
      body: JSON.stringify({ filters: { model: { value: ['odd-model'] } } }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const text = await res.text();
    const expected = Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % 2 === 1 && i % 5 !== 0);
    assert.ok(text.startsWith('unique_id,model,customer_identifier,input,metadata\r\n'));
    // One line per log, but the comma-and-newline input spans two physical lines inside its quotes.
    assert.equal(text.split('\r\n').filter(Boolean).length, expected.length + 1);
    assert.ok(text.includes('"""has, a comma and a \\""quote\\""\\nand a line"""'), 'input is JSON text, quoted');
    assert.ok(text.includes(`,"'=HYPERLINK(""x"")",`), 'a formula is written after a single quote');
    assert.ok(text.includes('"{""n"":1,""group"":""rest""}"'), 'metadata as JSON');
  });

  it("writes a metadata key's value and the error message as columns; the default CSV has the error", async () => {
    const c = await t.tenant();
    const logged = await api(t.baseUrl, 'POST', '/api/request-logs/batch/', {
      key: c.key,
      body: [
        { model: 'm', metadata: { team: 'search', n: 7 }, timestamp: new Date(Date.now() - 60_000).toISOString() },
        { model: 'm', status_code: 429, error_message: 'Slow down, please', metadata: { n: 8 } },
      ],
    });
    assert.equal(logged.status, 201, logged.text);
    const res = await exported(c, '&format=csv&fields=model,error_message,metadata__team,metadata__n');
    assert.equal(res.status, 200);
    assert.deepEqual((await res.text()).split('\r\n').filter(Boolean), [
      'model,error_message,metadata__team,metadata__n',
      'm,"Slow down, please",,8',
      'm,,search,7',
    ]);
    const byDefault = (await (await exported(c, '&format=csv')).text()).split('\r\n');
    assert.ok(byDefault[0].split(',').includes('error_message'), byDefault[0]);
    assert.match(byDefault[1], /Slow down, please/);
    const noKey = await exported(c, '&format=csv&fields=model,metadata__');
    assert.equal(noKey.status, 400);
  });

  it('refuses a bad format or field before sending anything, and shows one organization none of another', async () => {
    const badFormat = await exported(a, '&format=xlsx');
    assert.equal(badFormat.status, 400);
    assert.equal(((await badFormat.json()) as { error: { param: string } }).error.param, 'format');
    const badField = await exported(a, '&format=csv&fields=unique_id,secret_sauce');
    assert.equal(badField.status, 400);
    assert.match(((await badField.json()) as { error: { message: string } }).error.message, /secret_sauce/);
    const other = await exported(b, '&all_envs=true');
    assert.equal(other.status, 200);
    assert.equal(await other.text(), '');
    const unauthenticated = await fetch(`${t.baseUrl}/api/request-logs/export/`);
    assert.equal(unauthenticated.status, 401);
  });

  it('refuses a field named twice, naming fields: a short URL cannot ask for lines of any size', async () => {
    for (const fields of ['input,input', `unique_id,${'input,'.repeat(120)}input`, 'model, input ,model']) {
      const res = await exported(a, `&format=csv&fields=${fields}`);
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: { param: string; code: string; type: string; message: string } };
      assert.equal(body.error.param, 'fields');
      assert.equal(body.error.code, 'invalid_parameter');
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /'(input|model)' is named more than once/);
    }
    // Every field once is the most a line holds.
    const all = await exported(a, `&format=csv&fields=${LOG_ITEM_FIELDS.join(',')}`);
    assert.equal(all.status, 200);
    assert.ok((await all.text()).startsWith(`${LOG_ITEM_FIELDS.join(',')}\r\n`));
  });

  describe('through a single-use link', () => {
    const PARAMS = '&format=csv&fields=unique_id,model,customer_identifier,input,metadata&group=rest';
    /** The logs PARAMS and FILTERS match (odd models outside the fives), and a header line. */
    const LINES = 1 + Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % 2 === 1 && i % 5 !== 0).length;
    const FILTERS = { filters: { model: { value: ['odd-model'] } } };
    interface Link {
      token: string;
      url: string;
      expires_at: string;
    }
    const link = async (tenant: Tenant, query = PARAMS, body: unknown = FILTERS): Promise<Link> => {
      const res = await api(t.baseUrl, 'POST', `/api/request-logs/export/tokens/?start_time=${start}${query}`, {
        key: tenant.key,
        body,
      });
      assert.equal(res.status, 201, res.text);
      return res.body as Link;
    };
    /** A plain GET, as a browser following the link makes it: no Authorization header. */
    const follow = (url: string, method = 'GET') => fetch(url, { method });
    const refusal = async (res: Response) => {
      assert.equal(res.status, 401);
      const body = (await res.json()) as { error: { type: string; code: string; param: string } };
      assert.deepEqual(
        [body.error.type, body.error.code, body.error.param],
        ['authentication_error', 'invalid_export_token', 'token'],
      );
    };

    it('answers the export the key would get, once, to a GET without a key', async () => {
      const made = Date.now();
      const { token, url, expires_at } = await link(a);
      assert.equal(url, `${t.baseUrl}/api/request-logs/export/download/?token=${token}`);
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      const expires = Date.parse(expires_at) - made;
      assert.ok(expires > 55_000 && expires <= 61_000, `expires in ${expires} ms`);

      const res = await follow(url);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="gatelog-logs-.*\.csv"$/);
      const body = await res.text();
      const direct = await exported(a, PARAMS, { method: 'POST', body: JSON.stringify(FILTERS) });
      assert.equal(body, await direct.text(), 'the same bytes as the header-authenticated export');
      assert.equal(body.split('\r\n').filter(Boolean).length, LINES);

      await refusal(await follow(url));
      // JSON Lines of every field by default.
      const jsonl = await link(a, '', {});
      const lines = (await (await follow(jsonl.url)).text()).split('\n').filter(Boolean);
      assert.equal(lines.length, TOTAL);
    });

    it('is taken by exactly one of two requests that race for it', async () => {
      const { url } = await link(a);
      const answers = await Promise.all([follow(url), follow(url), follow(url)]);
      assert.deepEqual(answers.map((r) => r.status).sort(), [200, 401, 401]);
      await Promise.all(answers.map((r) => r.arrayBuffer()));
    });

    it('refuses an unknown, an expired, or a revoked key’s link; HEAD does not use it', async () => {
      await refusal(await follow(`${t.baseUrl}/api/request-logs/export/download/?token=not-a-token`));
      const missing = await follow(`${t.baseUrl}/api/request-logs/export/download/`);
      assert.equal(missing.status, 400);
      assert.equal(((await missing.json()) as { error: { param: string } }).error.param, 'token');

      const expiring = await link(a);
      await t.db.db
        .updateTable('export_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('token_hash', '=', hashExportToken(expiring.token))
        .execute();
      await refusal(await follow(expiring.url));
      assert.equal((await follow(expiring.url, 'HEAD')).status, 401);

      const c = await t.tenant();
      const revoked = await link(c);
      assert.equal((await follow(revoked.url, 'HEAD')).status, 200);
      assert.equal((await follow(revoked.url, 'HEAD')).status, 200, 'HEAD leaves the link unused');
      await revokeApiKey(t.db.db, c.keyId);
      await refusal(await follow(revoked.url));
    });

    it('checks the export when the link is made, and keeps to the organization of the key', async () => {
      const bad = await api(t.baseUrl, 'POST', `/api/request-logs/export/tokens/?format=csv&fields=input,input`, {
        key: a.key,
        body: {},
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.param, 'fields');
      const badFilter = await api(t.baseUrl, 'POST', '/api/request-logs/export/tokens/', {
        key: a.key,
        body: { filters: { secret_sauce: { value: ['x'] } } },
      });
      assert.equal(badFilter.status, 400);
      assert.equal((await api(t.baseUrl, 'POST', '/api/request-logs/export/tokens/', { body: {} })).status, 401);
      // An organization's link exports its own logs only: B has none.
      const own = await link(b, '&all_envs=true', {});
      assert.equal(await (await follow(own.url)).text(), '');
      // The link is a credential of its own: a key sent along changes nothing (and A's key is not B's).
      const mine = await link(a);
      const withB = await fetch(mine.url, { headers: { authorization: `Bearer ${b.key}` } });
      assert.equal(withB.status, 200);
      assert.equal((await withB.text()).split('\r\n').filter(Boolean).length, LINES);
    });

    it('stores the token as its hash only, and never writes it to the service log', async () => {
      const { token, url } = await link(a);
      assert.equal((await follow(url)).status, 200);
      const rows = await t.db.db.selectFrom('export_tokens').selectAll().execute();
      assert.ok(rows.length >= 5);
      assert.ok(!JSON.stringify(rows).includes(token));
      assert.ok(rows.some((r) => r.token_hash === hashExportToken(token) && r.used_at !== null));
      const logged = JSON.stringify(logLines);
      assert.ok(logged.includes('"path":"/api/request-logs/export/download/"'), 'the download is logged');
      assert.ok(!logged.includes(token), 'without its token');
    });
  });
});

/** The heap and Buffers the process holds once garbage is collected. */
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
function liveBytes(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/** liveBytes once two looks 100 ms apart agree within 1 MB (at most 5 s of looking). */
async function settledBytes(): Promise<number> {
  let last = liveBytes();
  for (let look = 0; look < 50; look += 1) {
    await sleep(100);
    const now = liveBytes();
    if (Math.abs(now - last) < 1e6) return now;
    last = now;
  }
  return last;
}

describe('export memory', () => {
  let t: TestApp;
  let a: Tenant;
  const LOGS = EXPORT_CHUNK * 3;
  const start = new Date(Date.now() - 3_600_000).toISOString();

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    // Large fields of quotes: a CSV line writes each as JSON text with its quotes doubled, three characters
    // for each one the log holds, and input and output twice (as text and as messages): a chunk's CSV is
    // about twice the text its logs hold.
    const quotes = (n: number) => '"'.repeat(n);
    const logs = Array.from({ length: LOGS }, (_, i) => ({
      model: 'big',
      input: [{ role: 'user', content: quotes(2500) }],
      output: { role: 'assistant', content: quotes(2500) },
      tools: [quotes(2500)],
      tool_calls: [quotes(2500)],
      metadata: { n: i },
      error_message: quotes(2000),
      timestamp: new Date(Date.now() - 20 * 60_000 + i).toISOString(),
    }));
    await postLogsInBatches(t, a, logs, 250);
  });
  after(() => t.close());

  it('holds less than one chunk of CSV text while it streams every field of large logs to a slow reader', async (ctx) => {
    const path = `/api/request-logs/export/?start_time=${start}&format=csv&fields=${LOG_ITEM_FIELDS.join(',')}`;
    // What the process holds besides the export: the least seen before, during (between chunks, the
    // server holds next to nothing of it) and after it. The seeding leaves work behind for a moment
    // (about a chunk's worth on an idle machine, more on a loaded one): the export starts once it is done.
    const samples = [await settledBytes()];
    let received = 0;
    let lines = 0;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${a.key}` } }, (res) => {
        assert.equal(res.statusCode, 200);
        let nextLook = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          // Count line feeds, not CRLF pairs: a chunk may end between a line's CR and its LF.
          for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
          if (received < nextLook) return;
          // A reader slower than the server: it stops, the server fills what it may hold and waits.
          nextLook = received + 4 * 1024 * 1024;
          res.pause();
          void sleep(300).then(() => {
            samples.push(liveBytes());
            res.resume();
          });
        });
        res.on('end', resolve);
        res.on('error', reject);
      });
      req.on('error', reject);
    });
    assert.equal(lines, LOGS + 1, 'a header and a line per log (no field holds a line break)');
    const chunkBytes = (received / LOGS) * EXPORT_CHUNK;
    assert.ok(chunkBytes > 20e6, `one chunk is ${(chunkBytes / 1e6).toFixed(1)} MB of CSV`);
    samples.push(liveBytes());
    const peak = Math.max(...samples) - Math.min(...samples);
    const measured = `held ${(peak / 1e6).toFixed(1)} MB at most, against ${(chunkBytes / 1e6).toFixed(1)} MB of one chunk's CSV`;
    ctx.diagnostic(measured);
    assert.ok(peak < chunkBytes, measured);
  });
});

describe('CSV fields', () => {
  it('quotes commas, quotes and line breaks; writes JSON for objects; guards formulas', () => {
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('two\nlines'), '"two\nlines"');
    assert.equal(csvField(null), '');
    assert.equal(csvField(undefined), '');
    assert.equal(csvField(-1.5), '-1.5');
    assert.equal(csvField(true), 'true');
    assert.equal(csvField({ a: [1, '2'] }), '"{""a"":[1,""2""]}"');
    for (const formula of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx']) assert.equal(csvField(formula), `'${formula}`);
    assert.equal(csvField('a=1'), 'a=1', 'only a leading formula character counts');
    assert.equal(csvLine(['a', 1, null]), 'a,1,\r\n');
  });

  it('guards full-width formula characters and whitespace before a formula', () => {
    for (const formula of ['＝1+1', '＋1', '－1', '＠SUM(A1)', '＝cmd|x']) {
      assert.equal(csvField(formula), `'${formula}`, formula);
    }
    for (const formula of [' =1+1', '  +1', '\u00a0-1', '\u3000@SUM(A1)', ' ＝1', '\t =1']) {
      assert.equal(csvField(formula), `'${formula}`, JSON.stringify(formula));
    }
    // Quoted when it needs to be, after the guard.
    assert.equal(csvField('\n=1'), `"'\n=1"`);
    assert.equal(csvField(' ＝HYPERLINK("x")'), `"' ＝HYPERLINK(""x"")"`);
    for (const text of ['  plain', ' 1', 'ｘ＝1', '\u3000text'])
      assert.equal(csvField(text), text, JSON.stringify(text));
  });
});
