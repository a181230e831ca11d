/**
 * What a new user's habits from other gateways meet: the /v1/ base URL, the root address, a model route
 * gatelog does not proxy, an embeddings server of their own, and a URL filter name with a typo.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api, startApp, startAppWithTenant, type Tenant, type TestApp } from '../support/harness.js';
import { audioPath } from '../support/audio.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { DEFAULT_CHAT_CONTENT } from '../support/fake-chat-answers.js';
import { logNamedBy, PROVIDER_KEY, type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';
import { METADATA_FILTERS_HEADER_MAX, metadataFiltersHeader } from '../../src/http/plumbing/list-filters.js';

const HELLO = DEFAULT_CHAT_CONTENT.join('');

/** The official client with its base URL at /v1, noting the log each answer names. */
function v1Client(p: ProxyTestApp, noted: { logId: string | null }): OpenAI {
  return new OpenAI({
    apiKey: p.a.key,
    baseURL: `${p.t.baseUrl}/v1`,
    maxRetries: 0,
    fetch: async (url: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(url, init);
      noted.logId = res.headers.get('x-gatelog-log-id');
      return res;
    },
  });
}

describe('the proxied routes under /v1/, through the official openai client', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let client: OpenAI;
  const noted: { logId: string | null } = { logId: null };

  before(async () => {
    p = await startProxyApp();
    fake = p.fake;
    client = v1Client(p, noted);
  });
  after(() => p.close());

  it('creates embeddings at /v1/embeddings, logged as at /api/embeddings', async () => {
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' });
    assert.equal(res.data[0].embedding.length, 1536);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path.endsWith('/embeddings'), true);
    assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    const log = await logNamedBy(p, noted.logId);
    assert.equal(log.log_type, 'embedding');
    assert.equal(log.model, 'text-embedding-3-small');
    assert.equal(log.status_code, 200);
    assert.equal(log.cost, 4e-8);
  });

  it('transcribes a real recording at /v1/audio/transcriptions', async () => {
    const res = await client.audio.transcriptions.create({
      file: fs.createReadStream(audioPath('hello.mp3')),
      model: 'whisper-1',
    });
    assert.equal(res.text, 'Hello world.');
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.path.endsWith('/audio/transcriptions'), true);
    assert.equal((sent.form?.file as { filename: string }).filename, 'hello.mp3');
    const log = await logNamedBy(p, noted.logId);
    assert.equal(log.log_type, 'transcription');
    assert.equal(log.status_code, 200);
    assert.equal(JSON.parse(log.input).file.duration_seconds, 1.332, 'read from the file');
    assert.equal(log.audio_duration, 2, "the provider's seconds");
    assert.equal(log.cost, 0.0002);
  });

  it('answers chat completions at /v1/chat/completions, whole and streamed', async () => {
    const whole = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    assert.equal(whole.choices[0].message.content, HELLO);
    const wholeLog = await logNamedBy(p, noted.logId);
    assert.equal(wholeLog.log_type, 'chat');
    assert.equal(wholeLog.stream, false);

    const stream = client.chat.completions.stream({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    assert.equal(final.choices[0].message.content, HELLO);
    assert.equal(final.usage?.completion_tokens, 4);
    assert.equal(fake.chats.at(-1)!.stream, true);
    const streamedLog = await logNamedBy(p, noted.logId);
    assert.equal(streamedLog.stream, true);
    assert.equal(streamedLog.completion_message.content, HELLO);
  });

  it('answers another method on a /v1/ route with 405, as on /api/', async () => {
    const res = await api(p.t.baseUrl, 'GET', '/v1/embeddings', { key: p.a.key });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
  });
});

describe('GET /', () => {
  it('redirects to the web UI', async () => {
    const t = await startApp();
    try {
      const res = await fetch(`${t.baseUrl}/`, { redirect: 'manual' });
      assert.equal(res.status, 302);
      assert.equal(new URL(res.headers.get('location')!, `${t.baseUrl}/`).pathname, '/ui/');
      // Relative, so that a reverse proxy's path prefix is kept.
      assert.equal(res.headers.get('location'), 'ui/');
      const followed = await fetch(`${t.baseUrl}/`);
      assert.equal(new URL(followed.url).pathname, '/ui/');
      assert.equal(followed.status, 200);
    } finally {
      await t.close();
    }
  });

  it('redirects to the UI at its configured path, and to /docs when the UI is off', async () => {
    const custom = await startApp({ env: { GATELOG_UI_PATH: '/console' } });
    try {
      const res = await fetch(`${custom.baseUrl}/`, { redirect: 'manual' });
      assert.equal(res.headers.get('location'), 'console/');
    } finally {
      await custom.close();
    }
    const off = await startApp({ env: { GATELOG_UI_PATH: 'off' } });
    try {
      const res = await fetch(`${off.baseUrl}/`, { redirect: 'manual' });
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), 'docs');
      const followed = await fetch(`${off.baseUrl}/`);
      assert.equal(new URL(followed.url).pathname, '/docs');
      assert.equal(followed.status, 200);
    } finally {
      await off.close();
    }
  });
});

describe('a model route gatelog does not proxy', () => {
  let t: TestApp;
  let a: Tenant;
  before(async () => ([t, a] = await startAppWithTenant()));
  after(() => t.close());

  const NOT_PROXIED: [string, string][] = [
    ['GET', '/models/gpt-4o'],
    ['POST', '/images/generations'],
    ['POST', '/completions'],
    ['POST', '/batches'],
    ['POST', '/audio/speech'],
    ['POST', '/moderations'],
  ];

  for (const [path, meant] of [
    ['/chat/completions', '/v1/chat/completions'],
    ['/embeddings/', '/v1/embeddings'],
    ['/api/v1/chat/completions', '/v1/chat/completions'],
    ['/v1/v1/responses', '/v1/responses'],
  ]) {
    it(`answers POST ${path} (a base URL without or with one /v1 too many) with the base URL to use`, async () => {
      const res = await api(t.baseUrl, 'POST', path, { key: a.key, body: { model: 'x' } });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'wrong_base_url');
      const message: string = res.body.error.message;
      assert.ok(message.includes(meant) && message.includes(`${t.baseUrl}/v1`), message);
    });
  }

  for (const prefix of ['/api', '/v1']) {
    for (const [method, path] of NOT_PROXIED) {
      it(`answers ${method} ${prefix}${path} with a 404 naming what gatelog proxies and the logging API`, async () => {
        const res = await api(t.baseUrl, method, `${prefix}${path}`, {
          key: a.key,
          body: method === 'POST' ? { model: 'x' } : undefined,
        });
        assert.equal(res.status, 404);
        assert.equal(res.body.error.type, 'not_found_error');
        assert.equal(res.body.error.code, 'route_not_proxied');
        assert.equal(res.body.error.param, null);
        const message: string = res.body.error.message;
        assert.equal(res.body.detail, message);
        assert.ok(message.startsWith(`gatelog does not proxy ${method} ${prefix}${path}.`), message);
        for (const route of ['POST /api/chat/completions', 'POST /api/embeddings', 'POST /api/audio/transcriptions']) {
          assert.ok(message.includes(route), `${route} in: ${message}`);
        }
        assert.ok(message.includes('/v1/'), message);
        assert.ok(message.includes('POST /api/request-logs/create/'), message);
      });
    }
  }

  it("is what the openai client shows for client.models.retrieve() (the list is served, a model's page is not)", async () => {
    const client = new OpenAI({ apiKey: a.key, baseURL: `${t.baseUrl}/v1`, maxRetries: 0 });
    await assert.rejects(client.models.retrieve('gpt-4o'), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError);
      assert.match(
        err.message,
        /gatelog does not proxy GET \/v1\/models\/gpt-4o\..*GET \/api\/models.*POST \/api\/request-logs\/create\//,
      );
      return true;
    });
  });

  it('leaves other unknown paths with the plain 404', async () => {
    for (const path of ['/api/nothing-here', '/nothing-here']) {
      const res = await api(t.baseUrl, 'GET', path, { key: a.key });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'not_found');
      assert.equal(res.body.error.message, `No route for GET ${path}.`);
    }
  });
});

describe('embeddings sent to a server of the organization own (a provider key with a base_url)', () => {
  let p: ProxyTestApp;
  let own: Tenant;
  let client: OpenAI;
  const noted: { logId: string | null } = { logId: null };

  before(async () => {
    p = await startProxyApp();
    own = await p.t.tenant();
    const registered = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
      key: own.key,
      body: { provider: 'openai', api_key: 'sk-own-server-key-5678', base_url: `${p.fake.baseUrl}/` },
    });
    assert.equal(registered.status, 201, registered.text);
    client = v1Client({ ...p, a: own }, noted);
  });
  after(() => p.close());

  it('takes any model name, passes it on and logs it', async () => {
    const res = await client.embeddings.create({ model: 'nomic-embed-text:v1.5', input: ['hello', 'world'] });
    assert.equal(res.data.length, 2);
    const sent = p.fake.requests.at(-1)!;
    assert.equal(sent.headers.authorization, 'Bearer sk-own-server-key-5678');
    assert.equal((sent.json as { model: string }).model, 'nomic-embed-text:v1.5');
    const log = await logNamedBy({ t: p.t, a: own }, noted.logId);
    assert.equal(log.status_code, 200);
    assert.equal(log.model, 'nomic-embed-text:v1.5');
    assert.equal(log.embedding_count, 2);
  });

  it('takes dimensions and inputs past 8,192 tokens for a model of its own, which decides them itself', async () => {
    const long = 'hello '.repeat(9000);
    const res = await client.embeddings.create({ model: 'bge-m3', input: long, dimensions: 4096 });
    assert.equal(res.data.length, 1);
    assert.equal((p.fake.requests.at(-1)!.json as { dimensions: number }).dimensions, 4096);
  });

  it("still checks OpenAI's models against what they take", async () => {
    const res = await api(p.t.baseUrl, 'POST', '/v1/embeddings', {
      key: own.key,
      body: { model: 'text-embedding-ada-002', input: 'x', dimensions: 8 },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'dimensions');
  });

  it('refuses a missing or empty model name, naming the field', async () => {
    for (const model of [undefined, '', 42]) {
      const res = await api(p.t.baseUrl, 'POST', '/api/embeddings', { key: own.key, body: { model, input: 'x' } });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.param, 'model');
    }
  });

  it("keeps OpenAI's list of models for an organization that uses OpenAI's endpoint", async () => {
    const res = await api(p.t.baseUrl, 'POST', '/api/embeddings', {
      key: p.a.key,
      body: { model: 'nomic-embed-text', input: 'x' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'model');
    // No provider serves it: the answer says how to register one that does.
    assert.equal(res.body.error.code, 'provider_not_found');
    const known = await api(p.t.baseUrl, 'POST', '/api/embeddings', {
      key: p.a.key,
      body: { model: 'text-embedding-3-smal', input: 'x' },
    });
    assert.equal(known.status, 400);
    assert.equal(known.body.error.param, 'model');
    assert.equal(known.body.error.code, 'model_not_found', 'an OpenAI model name mistyped is checked against the list');
  });
});

describe('URL quick filter names read as metadata', () => {
  let t: TestApp;
  let a: Tenant;
  const HEADER = 'x-gatelog-metadata-filters';

  before(async () => {
    t = await startApp();
    a = await t.tenant();
    const created = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
      key: a.key,
      body: { model: 'gpt-4o', metadata: { feature: 'search' }, input: 'q', output: 'a' },
    });
    assert.equal(created.status, 201, created.text);
  });
  after(() => t.close());

  it('names them in X-Gatelog-Metadata-Filters on the request-log list, in URL order', async () => {
    const res = await api(
      t.baseUrl,
      'GET',
      '/api/request-logs/list/?modle=gpt-4o&model=gpt-4o&feature=search&metadata__plan[value]=pro&metadata__plan[operator]=not',
      { key: a.key },
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get(HEADER), 'modle,feature');
    assert.equal(res.body.count, 0, 'the typo filters metadata, which no log has');

    const found = await api(t.baseUrl, 'GET', '/api/request-logs/?feature=search', { key: a.key });
    assert.equal(found.body.count, 1);
    assert.equal(found.headers.get(HEADER), 'feature');

    const posted = await api(t.baseUrl, 'POST', '/api/request-logs/list/?feature[value]=search', {
      key: a.key,
      body: { filters: { model: { value: ['gpt-4o'] } } },
    });
    assert.equal(posted.body.count, 1);
    assert.equal(posted.headers.get(HEADER), 'feature');
  });

  it('is absent when every name is a field, a metadata__ or a scores__ name', async () => {
    const res = await api(t.baseUrl, 'GET', '/api/request-logs/list/?model=gpt-4o&metadata__feature=search', {
      key: a.key,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.count, 1);
    assert.equal(res.headers.get(HEADER), null);
  });

  it('percent-encodes each name, so any name (commas, other scripts) reads back exactly', async () => {
    const names = ['plan,tier', 'модель', 'a b'];
    const query = names.map((n) => `${encodeURIComponent(n)}=x`).join('&');
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/list/?${query}`, { key: a.key });
    assert.equal(res.status, 200, res.text);
    const header = res.headers.get(HEADER)!;
    assert.equal(header, 'plan%2Ctier,%D0%BC%D0%BE%D0%B4%D0%B5%D0%BB%D1%8C,a%20b');
    assert.deepEqual(header.split(',').map(decodeURIComponent), names);
  });

  it('is sent by every list that reads URL quick filters: dataset logs and exports too', async () => {
    const dataset = await api(t.baseUrl, 'POST', '/api/datasets/', { key: a.key, body: { name: 'habits' } });
    assert.equal(dataset.status, 201, dataset.text);
    const logs = await api(t.baseUrl, 'GET', `/api/datasets/${dataset.body.id}/logs/list/?modle=gpt-4o`, {
      key: a.key,
    });
    assert.equal(logs.status, 200, logs.text);
    assert.equal(logs.headers.get(HEADER), 'modle');

    const exported = await api(t.baseUrl, 'GET', '/api/request-logs/export/?feature=search', { key: a.key });
    assert.equal(exported.status, 200, exported.text);
    assert.equal(exported.headers.get(HEADER), 'feature');
    assert.equal(exported.text.trim().split('\n').length, 1);
  });

  it('stays within 4 KB, leaving out the names past it', () => {
    const long = 'n'.repeat(3000);
    assert.equal(metadataFiltersHeader([long, 'x']), `${long},x`);
    assert.equal(metadataFiltersHeader([long, long, 'x']), long);
    assert.ok(METADATA_FILTERS_HEADER_MAX >= 4096);
    assert.equal(metadataFiltersHeader([]), null);
  });
});
