/** Every answer names its request: X-Request-Id, the id on the request's service log lines. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { type Tenant, type TestApp, closeInOrder } from '../support/harness.js';
import { startAppOnFakeUpstream } from '../support/proxy-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids', () => {
  let t: TestApp;
  let a: Tenant;
  let fake: FakeUpstream;
  const lines: Record<string, unknown>[] = [];
  before(async () => ({ fake, t, a } = await startAppOnFakeUpstream({ logLines: lines })));
  after(() => closeInOrder(t, fake));

  const idsOf = (res: Response) => [res.headers.get('x-request-id'), res.headers.get('x-gatelog-request-id')];
  /** reqId of the service log lines that mention this URL's request completing. */
  const loggedIds = (id: string) => lines.filter((l) => l.reqId === id).map((l) => l.msg);

  it('gives every answer a fresh id, the one on its service log lines', async () => {
    const responses = [
      await fetch(`${t.baseUrl}/health`),
      await fetch(`${t.baseUrl}/api/nope`),
      await fetch(`${t.baseUrl}/api/request-logs/list/`),
      await fetch(`${t.baseUrl}/api/request-logs/list/`, { headers: { authorization: `Bearer ${a.key}` } }),
      await fetch(`${t.baseUrl}/api/request-logs/%zz/`, { headers: { authorization: `Bearer ${a.key}` } }),
    ];
    const seen = new Set<string>();
    for (const res of responses) {
      const [id, gatelogId] = idsOf(res);
      assert.match(id ?? '', UUID, `${res.url} ${res.status}`);
      assert.equal(gatelogId, id);
      seen.add(id as string);
      assert.ok(loggedIds(id as string).length > 0, `log line of ${res.url}`);
    }
    assert.equal(seen.size, responses.length, 'each request its own id');
  });

  it('keeps an id a proxy in front set, unless it does not look like one', async () => {
    const kept = await fetch(`${t.baseUrl}/health`, { headers: { 'x-request-id': 'lb-7f3a:0001' } });
    assert.deepEqual(idsOf(kept), ['lb-7f3a:0001', 'lb-7f3a:0001']);
    assert.ok(loggedIds('lb-7f3a:0001').includes('request completed'));
    for (const bad of ['has spaces in it', 'x'.repeat(129)]) {
      const res = await fetch(`${t.baseUrl}/health`, { headers: { 'x-request-id': bad } });
      assert.match(res.headers.get('x-request-id') ?? '', UUID);
    }
  });

  it("a proxied answer carries the provider's x-request-id and gatelog's own beside it", async () => {
    const client = new OpenAI({ apiKey: a.key, baseURL: `${t.baseUrl}/api`, maxRetries: 0 });
    const { data, response } = await client.embeddings
      .create({
        model: 'text-embedding-3-small',
        input: 'hi',
        customer_credentials: { openai: { api_key: 'sk-x' } },
      } as never)
      .withResponse();
    assert.equal(data.object, 'list');
    // The fake provider names its answers req_<n>.
    assert.match(response.headers.get('x-request-id') ?? '', /^req_\d+$/);
    const gatelogId = response.headers.get('x-gatelog-request-id') ?? '';
    assert.match(gatelogId, UUID);
    // At the default level (info) a proxied call writes no line of its own: its log is the record.
    assert.deepEqual(loggedIds(gatelogId), []);
  });

  it('writes one line per answered request, with its method, path, status and time', async () => {
    const res = await fetch(`${t.baseUrl}/api/request-logs/list/?page_size=1`, {
      headers: { authorization: `Bearer ${a.key}` },
    });
    const id = res.headers.get('x-request-id') as string;
    const mine = lines.filter((l) => l.reqId === id);
    assert.equal(mine.length, 1, JSON.stringify(mine));
    assert.equal(mine[0].msg, 'request completed');
    assert.equal(mine[0].method, 'GET');
    assert.equal(mine[0].path, '/api/request-logs/list/');
    assert.equal(mine[0].statusCode, 200);
    assert.equal(typeof mine[0].responseTime, 'number');
  });
});
