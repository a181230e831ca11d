import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { revokeApiKey } from '../../src/auth/api-keys.js';
import { api, startApp, type TestApp } from '../support/harness.js';

describe('Bearer-key authentication', () => {
  let t: TestApp;
  before(async () => (t = await startApp()));
  after(() => t.close());

  it('answers 401 "not provided" without an Authorization header', async () => {
    const res = await api(t.baseUrl, 'GET', '/api/provider-keys/');
    assert.equal(res.status, 401);
    assert.equal(res.body.detail, 'Authentication credentials were not provided.');
    assert.equal(res.body.error.type, 'authentication_error');
  });

  it('answers 401 "invalid or expired" for an unknown key or a malformed header', async () => {
    for (const authorization of ['Bearer gl_live_notakey', 'Basic abc', 'Bearer', 'gl_live_notakey']) {
      const res = await api(t.baseUrl, 'GET', '/api/provider-keys/', { headers: { authorization } });
      assert.equal(res.status, 401, authorization);
      assert.equal(res.body.error.type, 'authentication_error');
      if (authorization.startsWith('Bearer ')) assert.equal(res.body.detail, 'Your API key is invalid or expired');
      else
        assert.match(res.body.detail, /^Your API key is invalid or expired: send it as "Authorization: Bearer <key>"/);
    }
  });

  it("says so when a provider's key is sent as the gatelog key, and where the provider's key goes", async () => {
    for (const [key, provider] of [
      ['sk-proj-abc123', 'OpenAI'],
      ['sk-ant-api03-abc', 'Anthropic'],
    ]) {
      const res = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'invalid_api_key');
      const message: string = res.body.detail;
      assert.ok(message.startsWith('Your API key is invalid or expired: '), message);
      assert.ok(message.includes(`an ${provider} key`) && message.includes('POST /api/provider-keys/'), message);
    }
  });

  it('accepts a valid key and refuses it within a second of revocation', async () => {
    const { key, keyId } = await t.tenant();
    const ok = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key });
    assert.equal(ok.status, 200);
    await revokeApiKey(t.db.db, keyId);
    const deadline = Date.now() + 1500;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = (await api(t.baseUrl, 'GET', '/api/provider-keys/', { key })).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 401);
  });

  it('does not accept a key that differs only after the lookup prefix', async () => {
    const { key } = await t.tenant();
    const forged = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    const res = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key: forged });
    assert.equal(res.status, 401);
  });
});
