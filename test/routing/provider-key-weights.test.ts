/**
 * A provider's keys share its calls by weight (docs/api.md "Providers"), end to end: two keys weighted
 * 3:1, 10,000 chat calls through gatelog, and the fake upstream counts which key each call carried.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { api, closeInOrder, type TestApp } from '../support/harness.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { registerProviderKey, startAppOnFakeUpstream } from '../support/proxy-app.js';

const CALLS = 10_000;
const IN_FLIGHT = 200;
const HEAVY = { keyId: 'heavy', apiKey: 'gsk-heavy-key-0000000001', weight: 3 };
const LIGHT = { keyId: 'light', apiKey: 'gsk-light-key-0000000002', weight: 1 };

describe('weighted provider keys through the gateway', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let key: string;
  let dispatcher: Agent;

  before(async () => {
    ({
      fake,
      t,
      a: { key },
    } = await startAppOnFakeUpstream());
    for (const k of [HEAVY, LIGHT]) {
      await registerProviderKey(t, key, {
        provider: 'groq',
        api_key: k.apiKey,
        key_id: k.keyId,
        weight: k.weight,
        base_url: fake.baseUrl,
        models: ['llama-*'],
      });
    }
    const listed = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key });
    assert.deepEqual(
      listed.body.results[0].keys.map((k: { key_id: string; weight: number }) => [k.key_id, k.weight]),
      [
        ['heavy', 3],
        ['light', 1],
      ],
    );
    dispatcher = new Agent({ connections: IN_FLIGHT });
  });
  after(() => closeInOrder(dispatcher, t, fake));

  it(`splits ${CALLS.toLocaleString('en')} calls 3:1 between the keys, within 3 % of the weights`, async () => {
    const body = JSON.stringify({ model: 'llama-3.1-8b-instant', messages: [{ role: 'user', content: 'hi' }] });
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        next += 1;
        const res = await fetch(`${t.baseUrl}/api/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
          // @ts-expect-error undici's fetch option: enough connections for every call in flight
          dispatcher,
        });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    assert.deepEqual([...statuses], [[200, CALLS]], 'every call answered');
    assert.equal(fake.chats.length, CALLS, 'every call reached the provider once');

    const seen = new Map<string, number>();
    for (const chat of fake.chats) {
      const auth = String(chat.request.headers.authorization);
      seen.set(auth, (seen.get(auth) ?? 0) + 1);
    }
    assert.deepEqual(
      [...seen.keys()].sort(),
      [`Bearer ${HEAVY.apiKey}`, `Bearer ${LIGHT.apiKey}`],
      'only the two registered keys, as Bearer tokens',
    );
    // The heavy key's count is Binomial(n = 10,000, p = 0.75): mean 7,500, sd = √(n·p·(1−p)) ≈ 43.3.
    // 3 % of 7,500 is ±225, more than 5.19 sd: a correct split falls outside it with probability
    // ≈ 2·10⁻⁷ (normal tail), so a failure here means the weights are not honoured — an even split
    // (5,000) or the wrong key favoured (2,500) is off by 2,500. The light key's count is the rest.
    const heavy = seen.get(`Bearer ${HEAVY.apiKey}`)!;
    const light = seen.get(`Bearer ${LIGHT.apiKey}`)!;
    const expectedHeavy = (CALLS * HEAVY.weight) / (HEAVY.weight + LIGHT.weight);
    const tolerance = expectedHeavy * 0.03;
    assert.ok(Math.abs(heavy - expectedHeavy) <= tolerance, `heavy key: ${heavy}, expected ${expectedHeavy} ± 225`);
    assert.ok(
      Math.abs(light - (CALLS - expectedHeavy)) <= tolerance,
      `light key: ${light}, expected ${CALLS - expectedHeavy} ± 225`,
    );
    assert.equal(heavy + light, CALLS);

    // Every call was logged as groq's, whichever key served it.
    await t.flush();
    const logged = await api(t.baseUrl, 'POST', '/api/request-logs/list/?page_size=1', {
      key,
      body: { filters: { provider_id: { value: ['groq'] } } },
    });
    assert.equal(logged.status, 200, logged.text);
    assert.equal(logged.body.count, CALLS);
  });
});
