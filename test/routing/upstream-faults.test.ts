/**
 * The provider misbehaving, on both proxied routes: it resets the connection before answering or halfway
 * through its answer, never answers, answers something that is not the API's JSON, or answers more than
 * gatelog accepts. Each call gets a 502 (504 for the wait) in OpenAI's error shape, and exactly one log,
 * marked failed, with that status — and the next call goes through.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { toFile } from 'openai';
import { audioPath } from '../support/audio.js';
import type { Behaviour } from '../support/fake-upstream.js';
import { api } from '../support/harness.js';
import { startProxyApp, type ProxyTestApp } from '../support/proxy-app.js';

const MAX_RESPONSE_BYTES = 100_000;

const faults: { name: string; behaviour: Behaviour; status: number; code: string }[] = [
  {
    name: 'resets the connection before answering',
    behaviour: { kind: 'drop' },
    status: 502,
    code: 'upstream_unreachable',
  },
  {
    name: 'resets the connection halfway through its answer',
    behaviour: { kind: 'cut' },
    status: 502,
    code: 'upstream_connection_lost',
  },
  { name: 'never answers', behaviour: { kind: 'hang' }, status: 504, code: 'upstream_timeout' },
  {
    name: 'answers a 200 that is not JSON',
    behaviour: { kind: 'fail', status: 200, body: '<html><body>gateway maintenance</body></html>' },
    status: 502,
    code: 'upstream_invalid_response',
  },
  {
    name: 'answers more than GATELOG_UPSTREAM_MAX_RESPONSE_BYTES',
    behaviour: { kind: 'fail', status: 200, body: JSON.stringify({ text: 'x'.repeat(MAX_RESPONSE_BYTES * 2) }) },
    status: 502,
    code: 'upstream_response_too_large',
  },
];

describe('a misbehaving provider', () => {
  let p: ProxyTestApp;
  const wav = fs.readFileSync(audioPath('hello.wav'));
  const routes = {
    embeddings: () => p.client.embeddings.create({ model: 'text-embedding-3-small', input: 'fault' }),
    transcriptions: async () =>
      p.client.audio.transcriptions.create({ file: await toFile(wav, 'hello.wav'), model: 'whisper-1' }),
  };
  const logCount = async () => {
    await p.t.flush();
    return (await api(p.t.baseUrl, 'GET', '/api/request-logs/list/?page_size=1', { key: p.a.key })).body
      .count as number;
  };

  before(async () => {
    p = await startProxyApp({
      GATELOG_UPSTREAM_TIMEOUT_MS: '1000',
      GATELOG_UPSTREAM_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES),
    });
  });
  after(() => p.close());

  for (const [route, call] of Object.entries(routes)) {
    for (const fault of faults) {
      it(`${route}: ${fault.name} → ${fault.status}, one failed log`, async () => {
        const before = await logCount();
        p.fake.behave(fault.behaviour, 1);
        const err = await call().then(
          (ok) => assert.fail(`answered ${JSON.stringify(ok).slice(0, 200)}`),
          (e: { status?: number; error?: { type?: string; code?: string }; headers?: Headers }) => e,
        );
        assert.equal(err.status, fault.status);
        assert.equal(err.error?.type, 'upstream_error');
        assert.equal(err.error?.code, fault.code);
        const logId = err.headers?.get('x-gatelog-log-id');
        assert.ok(logId, 'the answer names its log');
        assert.equal(await logCount(), before + 1, 'exactly one log for the call');
        const log = await api(p.t.baseUrl, 'GET', `/api/request-logs/${logId}/`, { key: p.a.key });
        assert.equal(log.body.status_code, fault.status);
        assert.equal(log.body.failed, true);
        assert.ok(log.body.error_message, 'the log says what went wrong');
        // The fault was one call's: the next one goes through.
        await call();
        assert.equal(await logCount(), before + 2);
      });
    }
  }
});
