/**
 * A speech-to-text form's platform fields follow the JSON body's rules: a NUL character (which PostgreSQL
 * text cannot hold) is a 400 naming the field before anything goes upstream, never a call answered 200
 * whose log the database then refuses. And what a provider answers with NUL is stored (as U+FFFD): a
 * served call always becomes its log.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { api } from '../support/harness.js';
import { AUDIO_FIXTURES, audioPath } from '../support/audio.js';
import { logNamedBy, type ProxyTestApp, sendStreamedForm, startProxyApp } from '../support/proxy-app.js';

describe('NUL characters in a speech-to-text form', () => {
  let p: ProxyTestApp;
  let audio: Buffer;
  before(async () => {
    p = await startProxyApp();
    audio = fs.readFileSync(audioPath(AUDIO_FIXTURES.find((f) => f.file.endsWith('.wav'))!.file));
  });
  after(() => p.close());

  const deadLetters = async () => {
    await p.t.flush();
    const row = await p.t.db.db
      .selectFrom('dead_letters')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  const cases: [string, string, string][] = [
    ['customer_identifier', 'user\u0000one', 'customer_identifier'],
    ['customer_email', 'a\u0000@example.com', 'customer_email'],
    ['thread_identifier', 'thread\u0000', 'thread_identifier'],
    ['metadata[k]', 'v\u0000', 'metadata.k'],
    ['metadata[k\u0000]', 'v', 'metadata.k\u0000'],
    ['metadata', JSON.stringify({ plan: 'free\u0000' }), 'metadata.plan'],
    ['metadata', JSON.stringify({ nested: { deep: ['x\u0000'] } }), 'metadata.nested.deep.0'],
    [
      'customer_credentials',
      JSON.stringify({ openai: { api_key: 'sk-\u0000' } }),
      'customer_credentials.openai.api_key',
    ],
  ];

  for (const [name, value, param] of cases) {
    it(`refuses ${JSON.stringify(name)} holding NUL with a 400 naming ${JSON.stringify(param)}, logged`, async () => {
      const before = p.fake.requests.length;
      const res = await sendStreamedForm(
        p,
        [
          ['model', 'whisper-1'],
          [name, value],
        ],
        'speech.wav',
        [audio],
      );
      const body = (await res.json()) as { error: { param: string; code: string } };
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(body.error.param, param);
      assert.equal(p.fake.requests.length, before, 'nothing went upstream');
      const log = await logNamedBy(p, res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 400);
      assert.equal(await deadLetters(), 0);
    });
  }

  it('refuses the same in a JSON body (embeddings), with the same answer', async () => {
    const res = await api(p.t.baseUrl, 'POST', '/api/embeddings', {
      key: p.a.key,
      body: { model: 'text-embedding-3-small', input: 'hi', customer_identifier: 'user\u0000one' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'customer_identifier');
    assert.equal(res.body.error.message.includes('NUL'), true);
  });

  it('logs a refused call whose model holds NUL or is too long to index', async () => {
    for (const model of ['whisper\u00001', 'w'.repeat(3000)]) {
      const res = await sendStreamedForm(p, [['model', model]], 'speech.wav', [audio]);
      assert.equal(res.status, 400);
      await logNamedBy(p, res.headers.get('x-gatelog-log-id'));
    }
    assert.equal(await deadLetters(), 0);
  });

  it("stores a provider's answer holding NUL (transcript, error message) with U+FFFD", async () => {
    p.fake.behave({ kind: 'fail', status: 200, body: { text: 'hello\u0000world' } }, 1);
    const ok = await sendStreamedForm(p, [['model', 'whisper-1']], 'speech.wav', [audio]);
    assert.equal(ok.status, 200);
    assert.equal(((await ok.json()) as { text: string }).text, 'hello\u0000world', 'the caller gets it as sent');
    const served = await logNamedBy(p, ok.headers.get('x-gatelog-log-id'));
    assert.equal(served.transcript, 'hello\uFFFDworld');

    p.fake.behave({ kind: 'fail', status: 429, body: { error: { message: 'slow\u0000down' } } }, 1);
    const refused = await sendStreamedForm(p, [['model', 'whisper-1']], 'speech.wav', [audio]);
    assert.equal(refused.status, 429);
    const failed = await logNamedBy(p, refused.headers.get('x-gatelog-log-id'));
    assert.ok(String(failed.error_message).includes('slow\uFFFDdown'), failed.error_message);
    assert.equal(await deadLetters(), 0);
  });
});
