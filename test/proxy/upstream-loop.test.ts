/**
 * Two gatelog installations whose providers point at each other (docs/decisions.md "Loops"): a call
 * carries the marks of every installation it passed through, so it is refused as soon as it comes back
 * to one — a few nested calls, not thousands — and a call that passed through too many is refused
 * before it goes anywhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { installationMark, LOOP_HEADER, MAX_VIA_MARKS } from '../../src/gateway/core/loop-guard.js';
import { api, type Tenant, type TestApp, startAppWithTenant, closeInOrder } from '../support/harness.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { registerProviderKey, startAppOnFakeUpstream } from '../support/proxy-app.js';

const hello = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello' }] };

/** Status codes of the organization's logs, once every acknowledged log is written. */
async function statuses(t: TestApp, tenant: Tenant): Promise<number[]> {
  await t.flush();
  const res = await api(t.baseUrl, 'GET', '/api/request-logs/list/', { key: tenant.key });
  assert.equal(res.status, 200, res.text);
  return res.body.results.map((l: { status_code: number }) => l.status_code);
}

describe('two installations whose providers point at each other', () => {
  let one: TestApp;
  let two: TestApp;
  let a: Tenant;
  let b: Tenant;
  before(async () => {
    [one, a] = await startAppWithTenant();
    [two, b] = await startAppWithTenant();
    // Each organization's provider is the other installation, with a key of the other's.
    for (const [t, tenant, other, otherKey] of [
      [one, a, two, b.key],
      [two, b, one, a.key],
    ] as const) {
      await registerProviderKey(t, tenant.key, {
        provider: 'openai',
        api_key: otherKey,
        base_url: `${other.baseUrl}/api`,
      });
    }
  });
  after(() => closeInOrder(one, two));

  it('refuses the call when it comes back, after one nested call on each side', { timeout: 60_000 }, async () => {
    const client = new OpenAI({ apiKey: a.key, baseURL: `${one.baseUrl}/api`, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create(hello),
      (err: { status: number; code: string }) => err.status === 508 && err.code === 'proxy_loop',
    );
    // One: the caller's call and the one that came back (refused); two: the one it passed on. No more.
    assert.deepEqual(await statuses(one, a), [508, 508]);
    assert.deepEqual(await statuses(two, b), [508]);
  });

  it('refuses the streamed call and the stored-response read the same way', { timeout: 60_000 }, async () => {
    const before = (await statuses(one, a)).length;
    const res = await api(one.baseUrl, 'POST', '/api/chat/completions', {
      key: a.key,
      body: { ...hello, stream: true },
    });
    assert.equal(res.status, 508, res.text);
    assert.equal((await statuses(one, a)).length, before + 2);
    const stored = await api(one.baseUrl, 'GET', '/api/responses/resp_1', { key: a.key });
    assert.equal(stored.status, 508, stored.text);
    assert.equal(stored.body.error.code, 'proxy_loop');
  });
});

describe('the marks a call carries', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let key: string;
  const foreign = (n: number) => Array.from({ length: n }, (_, i) => (0xabc0 + i).toString(16).padStart(16, '0'));
  before(async () => {
    ({
      fake,
      t,
      a: { key },
    } = await startAppOnFakeUpstream());
    await registerProviderKey(t, key, { provider: 'openai', api_key: 'sk-registered-00001' });
  });
  after(() => closeInOrder(t, fake));
  const chat = (via?: string) =>
    api(t.baseUrl, 'POST', '/api/chat/completions', {
      key,
      body: hello,
      headers: via === undefined ? {} : { [LOOP_HEADER]: via },
    });

  it('passes on the marks it arrived with, then its own; anything else in the header is dropped', async () => {
    const own = installationMark(t.secretKey);
    const res = await chat(`${foreign(2).join(', ')}, not-a-mark, ${'f'.repeat(200)}`);
    assert.equal(res.status, 200, res.text);
    const sent = fake.chats.at(-1)!.request.headers[LOOP_HEADER];
    assert.equal(sent, [...foreign(2), own].join(', '));
    // Without marks: its own alone.
    assert.equal((await chat()).status, 200);
    assert.equal(fake.chats.at(-1)!.request.headers[LOOP_HEADER], own);
  });

  it(`refuses a call that passed through ${MAX_VIA_MARKS} installations already, without calling upstream`, async () => {
    const seen = fake.chats.length;
    const nearly = await chat(foreign(MAX_VIA_MARKS - 1).join(','));
    assert.equal(nearly.status, 200, nearly.text);
    const res = await chat(foreign(MAX_VIA_MARKS).join(','));
    assert.equal(res.status, 508, res.text);
    assert.equal(res.body.error.code, 'proxy_loop');
    assert.match(res.body.error.message, new RegExp(`passed through ${MAX_VIA_MARKS} gatelog installations`));
    assert.equal(fake.chats.length, seen + 1, 'only the call under the bound went upstream');
  });
});
