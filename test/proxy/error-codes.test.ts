/**
 * A proxied call's error_code (docs/api.md "The log record"), through the official openai client: a
 * call gatelog refused logs its refusal's code, which the filter language finds and /metrics counts in
 * gatelog_refused_total{reason}; a provider's error answer logs the provider's own code (else
 * upstream_error); a stream ends as client_disconnected, stream_interrupted or stream_timeout; a call that
 * succeeded has none. Anthropic's codes are its errors' types, in an answer and in a stream's error event.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api, type TestApp } from '../support/harness.js';
import { LogNotingClient } from '../support/noting-client.js';
import { type ProxyTestApp, logWhenWritten, startClaudeProxyApp } from '../support/proxy-app.js';
import type { FakeAnthropic } from '../support/fake-anthropic.js';
import { a, fake, IDLE_MS, logOf, noting, QUIET_STREAMS_ENV, t, useProxyApp } from '../support/proxied-route.js';

const MESSAGES = [{ role: 'user' as const, content: 'Say hello.' }];

/** Every sample of `name` in a /metrics text: its labels as JSON → its value. */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    found.set(JSON.stringify(labels), Number(match[3]));
  }
  return found;
}

/** gatelog_refused_total by reason, as /metrics shows it now (no token is configured: it is open). */
async function refusedTotals(app: TestApp): Promise<Record<string, number>> {
  const res = await fetch(`${app.baseUrl}/metrics`);
  assert.equal(res.status, 200);
  const totals: Record<string, number> = {};
  for (const [labels, value] of samples(await res.text(), 'gatelog_refused_total')) {
    totals[(JSON.parse(labels) as { reason: string }).reason] = value;
  }
  return totals;
}

/** What a call the client saw fail threw (it must fail). */
async function failure(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await call.then(
    () => assert.fail('the call succeeded'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof OpenAI.APIError, String(err));
  return err;
}

describe('error_code of proxied calls', () => {
  useProxyApp(QUIET_STREAMS_ENV);

  /** The official client with a key of the tenant's organization that may call gpt-4o-mini only. */
  let miniOnly: LogNotingClient;
  before(async () => {
    const made = await api(t.baseUrl, 'POST', '/api/keys/', {
      key: a.key,
      body: { name: 'mini only', scopes: ['models', 'read'], allowed_models: ['gpt-4o-mini'] },
    });
    assert.equal(made.status, 201, made.text);
    miniOnly = new LogNotingClient(t.baseUrl, made.body.key);
  });

  const ask = (client: OpenAI, model: string) => client.chat.completions.create({ model, messages: MESSAGES });

  /** The unique ids of the logs a body filter lists (the tenant's, in the last hour). */
  const listed = async (filters: unknown): Promise<string[]> => {
    await t.flush();
    const res = await api(t.baseUrl, 'POST', '/api/request-logs/list/?page_size=100', {
      key: a.key,
      body: { filters },
    });
    assert.equal(res.status, 200, res.text);
    return (res.body.results as { unique_id: string }[]).map((r) => r.unique_id).sort();
  };

  it('a call that succeeded has none', async () => {
    await ask(noting.client, 'gpt-4o-mini');
    const log = await logOf(noting.logId);
    assert.equal(log.status_code, 200);
    assert.equal(log.error_code, null);
  });

  it('a model outside the key’s list: model_not_allowed, found by the filter, counted as refused', async () => {
    assert.deepEqual(await refusedTotals(t), {}, 'nothing refused yet');
    const refusedIds: string[] = [];
    for (const expected of [1, 2]) {
      const err = await failure(ask(miniOnly.client, 'gpt-4o'));
      assert.equal(err.status, 403);
      assert.equal(err.code, 'model_not_allowed');
      const log = await logOf(miniOnly.logId);
      assert.equal(log.status_code, 403);
      assert.equal(log.error_code, 'model_not_allowed');
      refusedIds.push(log.unique_id);
      assert.deepEqual(await refusedTotals(t), { model_not_allowed: expected });
    }
    // Other logs beside them: one that succeeded, one the provider refused.
    await ask(miniOnly.client, 'gpt-4o-mini');
    fake.behave({ kind: 'fail', status: 400, body: { error: { message: 'no', type: 'x', code: 'bad_thing' } } }, 1);
    await failure(ask(noting.client, 'gpt-4o-mini'));
    await logOf(noting.logId);
    assert.deepEqual(
      await listed({ error_code: { operator: '', value: ['model_not_allowed'] } }),
      refusedIds.sort(),
      'the filter lists exactly the refused calls',
    );
    // filter_options offers the codes with their counts.
    const res = await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=1&fetch_filters=true', { key: a.key });
    assert.equal(res.status, 200, res.text);
    const choices = res.body.filter_options.error_code.value_choices as { value: string; count: number }[];
    assert.deepEqual(
      choices.filter((c) => ['model_not_allowed', 'bad_thing'].includes(c.value)).map((c) => [c.value, c.count]),
      [
        ['model_not_allowed', 2],
        ['bad_thing', 1],
      ],
    );
    assert.ok(!choices.some((c) => c.value === 'null'), 'a call that succeeded offers no value');
  });

  it('a provider’s error answer: its own code, else upstream_error; never counted as gatelog’s refusal', async () => {
    const before = await refusedTotals(t);
    const body = (code: unknown) => ({ error: { message: 'Slow down.', type: 'requests', param: null, code } });
    fake.behave({ kind: 'fail', status: 429, body: body('rate_limit_exceeded') }, 1);
    const err = await failure(ask(noting.client, 'gpt-4o-mini'));
    assert.equal(err.status, 429);
    let log = await logOf(noting.logId);
    assert.equal(log.status_code, 429);
    assert.equal(log.error_message, 'Slow down.');
    assert.equal(log.error_code, 'rate_limit_exceeded');
    // No code, a code that is a sentence, a body that is not JSON: gatelog's upstream_error.
    for (const answer of [body(null), body('this is not a code'), 'Bad Gateway, in plain text']) {
      fake.behave({ kind: 'fail', status: 400, body: answer }, 1);
      await failure(ask(noting.client, 'gpt-4o-mini'));
      log = await logOf(noting.logId);
      assert.equal(log.status_code, 400);
      assert.equal(log.error_code, 'upstream_error', JSON.stringify(answer));
    }
    assert.deepEqual(await refusedTotals(t), before, "the provider's 429 is not gatelog's refusal");
  });

  it('a stream its client left: client_disconnected', async () => {
    fake.chat({ choices: [{ content: Array.from({ length: 40 }, (_, i) => `w${i} `) }], eventDelayMs: 50 });
    const stream = await noting.client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: MESSAGES,
      stream: true,
    });
    let received = '';
    for await (const chunk of stream) {
      received += chunk.choices[0]?.delta?.content ?? '';
      if (received.includes('w2 ')) break;
    }
    const log = await logOf(noting.logId);
    assert.equal(log.status_code, 499);
    assert.equal(log.error_code, 'client_disconnected');
  });

  /** A streamed call read to its end by the client (which may throw on the provider's error event). */
  async function streamed(): Promise<Record<string, unknown>> {
    const stream = await noting.client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: MESSAGES,
      stream: true,
    });
    try {
      for await (const _chunk of stream);
    } catch {
      // The stream's error event.
    }
    return logOf(noting.logId);
  }

  it('a stream that broke off, fell silent or said it failed: the stream’s code', async () => {
    fake.behave({ kind: 'stream-reset', after: 2 }, 1);
    let log = await streamed();
    assert.equal(log.status_code, 502);
    assert.equal(log.error_code, 'stream_interrupted');

    fake.behave({ kind: 'stream-end', after: 2 }, 1);
    log = await streamed();
    assert.equal(log.status_code, 502);
    assert.equal(log.error_code, 'stream_interrupted');

    fake.behave({ kind: 'stream-silent', after: 2 }, 1);
    log = await streamed();
    assert.equal(log.status_code, 504, `silent past ${IDLE_MS} ms`);
    assert.equal(log.error_code, 'stream_timeout');

    // The provider's error event without a code of its own.
    fake.behave({ kind: 'stream-error', after: 2 }, 1);
    log = await streamed();
    assert.equal(log.status_code, 502);
    assert.equal(log.error_code, 'upstream_error');
  });
});

describe('error_code of Responses API streams', () => {
  useProxyApp();

  /** A streamed response read to its end by the client (which may throw on the provider's error event). */
  async function streamedResponse(): Promise<Record<string, unknown>> {
    const stream = await noting.client.responses.create({ model: 'gpt-4o-mini', input: 'Say hello.', stream: true });
    try {
      for await (const _event of stream);
    } catch {
      // The provider's error event.
    }
    return logOf(noting.logId);
  }

  it('an error event and a response.failed event: the provider’s code', async () => {
    for (const kind of ['stream-error', 'stream-failed'] as const) {
      fake.behave({ kind, after: 4 }, 1);
      const log = await streamedResponse();
      assert.equal(log.status_code, 502, kind);
      assert.equal(log.error_code, 'server_error', kind);
    }
  });
});

describe('error_code of calls to Anthropic', () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;
  let client: LogNotingClient;
  before(async () => {
    ({ p, claude } = await startClaudeProxyApp());
    client = new LogNotingClient(p.t.baseUrl, p.a.key);
  });
  after(async () => {
    await p.close();
    await claude.close();
  });

  const logOfCall = () => logWhenWritten(p.t, p.a, client.logId);

  it('an error answer: its type', async () => {
    claude.behave({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }, 1);
    const err = await failure(
      client.client.chat.completions.create({ model: 'claude-sonnet-4', messages: MESSAGES, max_tokens: 50 }),
    );
    assert.equal(err.status, 529);
    const log = await logOfCall();
    assert.equal(log.status_code, 529);
    assert.equal(log.error_code, 'overloaded_error');
  });

  it('a stream’s error event: its type', async () => {
    claude.behave({ kind: 'stream-error', after: 3, type: 'overloaded_error' }, 1);
    const stream = await client.client.chat.completions.create({
      model: 'claude-sonnet-4',
      messages: MESSAGES,
      max_tokens: 50,
      stream: true,
    });
    await assert.rejects(async () => {
      for await (const _chunk of stream);
    });
    const log = await logOfCall();
    assert.equal(log.status_code, 502);
    assert.equal(log.error_code, 'overloaded_error');
  });
});
