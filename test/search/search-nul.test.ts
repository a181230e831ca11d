/**
 * A NUL character (U+0000) in what a log says, through every route that stores content (the logging
 * API, chat completions, Anthropic messages, Responses, embeddings, OTLP traces): the call is answered,
 * the background indexer indexes the log (NUL becomes a space in the search text: PostgreSQL text cannot
 * hold it) and goes on, and search finds the log by the words on either side — and finds the next log
 * another organization writes, through the index.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { api, type Tenant } from '../support/harness.js';
import { type ProxyTestApp, startClaudeProxyApp } from '../support/proxy-app.js';
import type { FakeAnthropic } from '../support/fake-anthropic.js';
import { readWatermark } from '../../src/logs/search/search-store.js';

const HOUR = 3600_000;

/** A word unique to this run and route, and a second one the NUL separates from it. */
const words = (route: string) => {
  const tag = crypto.randomBytes(3).toString('hex');
  return { before: `nulbefore${route}${tag}`, after: `nulafter${route}${tag}` };
};

describe('search: a NUL in a log, on every content route', () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;
  let b: Tenant;
  before(async () => {
    ({ p, claude } = await startClaudeProxyApp());
    b = await p.t.tenant();
  });
  after(async () => {
    await p.close();
    await claude.close();
  });

  const found = async (tenant: Tenant, search: string) => {
    const since = new Date(Date.now() - HOUR).toISOString();
    const res = await api(
      p.t.baseUrl,
      'GET',
      `/api/request-logs/list/?start_time=${since}&search=${encodeURIComponent(search)}`,
      { key: tenant.key },
    );
    assert.equal(res.status, 200, res.text);
    return (res.body.results as { unique_id: string }[]).map((r) => r.unique_id);
  };
  const maxId = async () =>
    Number(
      (
        await p.t.db.db
          .selectFrom('logs')
          .select((eb) => eb.fn.max('id').as('id'))
          .executeTakeFirst()
      )?.id ?? 0,
    );
  /** Waits until the running indexer's watermark passes every log written so far. */
  const indexed = async (what: string) => {
    await p.t.flush();
    const target = await maxId();
    const deadline = Date.now() + 20_000;
    while ((await readWatermark(p.t.db.db)) < target) {
      assert.ok(
        Date.now() < deadline,
        `the indexer reached ${what} (watermark ${await readWatermark(p.t.db.db)} < ${target})`,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('answers each call, indexes its log and finds it; indexing goes on for another organization', async () => {
    const a = p.a;
    const sent: { route: string; before: string; after: string; logId: string }[] = [];
    const note = (route: string, w: { before: string; after: string }, logId: string | null | undefined) => {
      assert.ok(logId, `${route}: the answer names its log`);
      sent.push({ route, ...w, logId });
    };

    // The logging API: input and output as JSON text (the NUL kept, escaped).
    let w = words('log');
    const logged = await api(p.t.baseUrl, 'POST', '/api/request-logs/create/', {
      key: a.key,
      body: { model: 'gpt-4o', input: `${w.before}\u0000${w.after}`, output: `answer\u0000${w.after}` },
    });
    assert.equal(logged.status, 201, logged.text);
    note('logging API', w, logged.body.unique_id);

    // Chat completions through the official client.
    w = words('chat');
    const chat = await p.client.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: `${w.before}\u0000${w.after}` }] })
      .withResponse();
    note('chat completions', w, chat.response.headers.get('x-gatelog-log-id'));

    // Anthropic messages (native).
    w = words('claude');
    const claudeRes = await fetch(`${p.t.baseUrl}/api/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-20250514',
        max_tokens: 64,
        messages: [{ role: 'user', content: `${w.before}\u0000${w.after}` }],
      }),
    });
    assert.equal(claudeRes.status, 200, await claudeRes.clone().text());
    await claudeRes.arrayBuffer();
    note('anthropic messages', w, claudeRes.headers.get('x-gatelog-log-id'));

    // Responses.
    w = words('responses');
    const responses = await p.client.responses
      .create({ model: 'gpt-4o-mini', input: `${w.before}\u0000${w.after}` })
      .withResponse();
    note('responses', w, responses.response.headers.get('x-gatelog-log-id'));

    // Embeddings.
    w = words('embed');
    const embeddings = await p.client.embeddings
      .create({ model: 'text-embedding-3-small', input: `${w.before}\u0000${w.after}` })
      .withResponse();
    note('embeddings', w, embeddings.response.headers.get('x-gatelog-log-id'));

    // OTLP traces (JSON): a GenAI span whose messages hold the NUL.
    w = words('otlp');
    const traceId = crypto.randomBytes(16).toString('hex');
    const spanId = crypto.randomBytes(8).toString('hex');
    const now = BigInt(Date.now()) * 1_000_000n;
    const attribute = (key: string, value: string) => ({ key, value: { stringValue: value } });
    const otlp = await fetch(`${p.t.baseUrl}/api/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [attribute('service.name', 'nul-app')] },
            scopeSpans: [
              {
                scope: { name: 'nul-test' },
                spans: [
                  {
                    traceId,
                    spanId,
                    name: 'chat gpt-4o',
                    kind: 1,
                    startTimeUnixNano: String(now - 500_000_000n),
                    endTimeUnixNano: String(now),
                    attributes: [
                      attribute('gen_ai.operation.name', 'chat'),
                      attribute('gen_ai.request.model', 'gpt-4o'),
                      attribute(
                        'gen_ai.input.messages',
                        JSON.stringify([
                          { role: 'user', parts: [{ type: 'text', content: `${w.before}\u0000${w.after}` }] },
                        ]),
                      ),
                    ],
                    status: { code: 0 },
                  },
                ],
              },
            ],
          },
        ],
      }),
    });
    assert.equal(otlp.status, 200, await otlp.clone().text());
    await otlp.arrayBuffer();
    await p.t.flush();
    const spans = await api(
      p.t.baseUrl,
      'GET',
      `/api/request-logs/list/?start_time=${new Date(Date.now() - HOUR).toISOString()}&trace_unique_id=${traceId}`,
      { key: a.key },
    );
    assert.equal(spans.status, 200, spans.text);
    assert.equal(spans.body.results.length, 1, 'the span is logged');
    note('otlp traces', w, spans.body.results[0].unique_id);

    // Every log holds its NUL (the route stored it), and the indexer indexes them all.
    const indexer = p.t.searchIndexer;
    indexer.start();
    try {
      await indexed('the logs holding NUL');
      for (const s of sent) {
        assert.deepEqual(await found(a, s.before), [s.logId], `${s.route}: found by the word before the NUL`);
        assert.deepEqual(await found(a, s.after), [s.logId], `${s.route}: found by the word after it`);
        assert.deepEqual(await found(a, `${s.before} ${s.after}`), [s.logId], `${s.route}: both words`);
      }

      // Another organization's next log is indexed too, and found through the index.
      const word = `afternul${crypto.randomBytes(3).toString('hex')}`;
      const other = await api(p.t.baseUrl, 'POST', '/api/request-logs/create/', {
        key: b.key,
        body: { model: 'gpt-4o', input: `a question about ${word}`, output: 'an answer' },
      });
      assert.equal(other.status, 201, other.text);
      await indexed("another organization's next log");
      assert.deepEqual(await found(b, word), [other.body.unique_id]);
      assert.deepEqual(await found(a, word), [], 'one organization never finds the other one');

      const health = await api(p.t.baseUrl, 'GET', '/health');
      assert.equal(health.status, 200, health.text);
      assert.deepEqual(health.body.search_index, { state: 'ok', set_aside: 0 });
    } finally {
      await indexer.stop();
    }
  });
});
