/**
 * The rules of retries, fallbacks, load balancing and the circuit breaker (docs/api.md "Retries and
 * fallbacks") as a caller meets them: calls through gatelog with the official openai client, against
 * the fake provider told to fail on cue and a loopback port where nothing listens. Which statuses are
 * tried again, how long a retry waits, the split of a weighted group, one log per call however many
 * tries it took, what that log says when nothing answered, and the same rules on the Responses and
 * speech-to-text routes.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { audioPath } from '../support/audio.js';
import { api } from '../support/harness.js';
import {
  closedPort,
  logNamedBy,
  logWhenWritten,
  PROVIDER_KEY,
  type ProxyTestApp,
  startProxyApp,
} from '../support/proxy-app.js';

type Body = OpenAI.ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;
interface LoggedAttempt {
  provider: string;
  model: string;
  status_code: number;
  error: string;
  latency: number;
}

const hello = (extra: Record<string, unknown> = {}): Body =>
  ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], ...extra }) as Body;
const retry = (num_retries = 3, retry_after = 0.01) => ({
  retry_params: { retry_enabled: true, num_retries, retry_after },
});
/** The error of a provider at a closed port, naming what the system said (set once the port is known). */
let UNREACHABLE = '';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tries = (log: { attempts: LoggedAttempt[] | null }) =>
  (log.attempts ?? []).map((a) => [a.provider, a.model, a.status_code, a.error]);

async function addProvider(p: ProxyTestApp, provider: string, base_url: string, models: string[]) {
  const res = await api(p.t.baseUrl, 'POST', '/api/provider-keys/', {
    key: p.a.key,
    body: { provider, api_key: `${provider}-key-00000001`, base_url, models },
  });
  assert.equal(res.status, 201, res.text);
}

/**
 * Runs one call (tagged with a customer_identifier of its own) and asserts it left exactly one log: one
 * log queued to the writer (written or refused: a second log under the same unique_id would be refused
 * by the database, not stored twice) and one log found under its customer_identifier.
 */
async function assertOneLog(p: ProxyTestApp, call: (customer: string) => Promise<unknown>): Promise<void> {
  const customer = `routing-${crypto.randomUUID()}`;
  const queued = () => p.t.writer.stats.written + p.t.writer.dropped;
  await p.t.flush();
  const before = queued();
  await call(customer);
  // A second log would be queued after the answer (a stream's when it ended): give it time to be.
  await sleep(300);
  await p.t.flush();
  assert.equal(queued() - before, 1, 'logs the writer was given');
  const res = await api(p.t.baseUrl, 'POST', '/api/request-logs/list/', {
    key: p.a.key,
    body: { filters: { customer_identifier: { value: [customer] } } },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.count, 1, res.text);
  assert.equal(res.body.results.length, 1);
}

describe('routing rules', () => {
  let p: ProxyTestApp;
  const chat = async (body: Body) => {
    const { data, response } = await p.client.chat.completions.create(body).withResponse();
    return { data, log: await logNamedBy(p, response.headers.get('x-gatelog-log-id')) };
  };
  /** A call that fails: its status as the client got it, and its log. */
  const failing = async (body: Record<string, unknown>) => {
    const res = await api(p.t.baseUrl, 'POST', '/api/chat/completions', { key: p.a.key, body });
    assert.ok(res.status >= 400, res.text);
    return { status: res.status, body: res.body, log: await logNamedBy(p, res.headers.get('x-gatelog-log-id')) };
  };

  before(async () => {
    // No circuit breaker here: the unreachable provider is called again and again on purpose.
    p = await startProxyApp({ GATELOG_CIRCUIT_FAILURES: '0' });
    const port = await closedPort();
    UNREACHABLE = `The provider could not be reached: ECONNREFUSED 127.0.0.1:${port}.`;
    await addProvider(p, 'down', `http://127.0.0.1:${port}/v1`, ['down-model', 'down-whisper']);
    await addProvider(p, 'spare', p.fake.baseUrl, ['spare-model']);
  });
  beforeEach(() => p.fake.behave({ kind: 'ok' }));
  after(async () => {
    await p?.close();
  });

  for (const status of [408, 409]) {
    it(`retries a ${status} on the same model, then answers`, async () => {
      p.fake.behave({ kind: 'fail', status, body: { error: { message: `answered ${status}` } } }, 1);
      const seen = p.fake.requests.length;
      const { data, log } = await chat(hello(retry(2)));
      assert.equal(data.choices[0].message.content, 'Hello, world!');
      assert.equal(p.fake.requests.length - seen, 2, 'one failed try and one that answered');
      assert.equal(log.status_code, 200);
      assert.deepEqual(tries(log), [['openai', 'gpt-4o-mini', status, `answered ${status}`]]);
      assert.equal(log.fallback_used, false);
    });
  }

  for (const status of [400, 404]) {
    it(`does not retry a ${status}, nor move to a fallback: it is the answer`, async () => {
      // Failing more than once: a retry or a fallback would be seen as a second request.
      p.fake.behave({ kind: 'fail', status, body: { error: { message: `answered ${status}` } } }, 5);
      const seen = p.fake.requests.length;
      const { status: got, log } = await failing(hello({ ...retry(3), fallback_models: ['spare-model'] }));
      assert.equal(got, status);
      assert.equal(p.fake.requests.length - seen, 1);
      assert.equal(log.status_code, status);
      assert.equal(log.error_message, `answered ${status}`);
      assert.deepEqual(tries(log), []);
    });
  }

  it('waits retry_after before the first retry and twice as long before each next one', async () => {
    // 0.25 + 0.5 + 1 s; the same wait each time would be 0.75 s.
    p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 3);
    const started = performance.now();
    const { log } = await chat(hello(retry(3, 0.25)));
    const waited = performance.now() - started;
    assert.ok(waited >= 1700, `answered after ${waited} ms`);
    assert.equal(log.status_code, 200);
    assert.equal(log.attempts.length, 3);
  });

  it('retries a refused connection on the same model, logging each failure, then falls back', async () => {
    const { data, log } = await chat(hello({ model: 'down-model', ...retry(2), fallback_models: ['gpt-4o-mini'] }));
    assert.equal(data.choices[0].message.content, 'Hello, world!');
    assert.deepEqual(tries(log), [
      ['down', 'down-model', 502, UNREACHABLE],
      ['down', 'down-model', 502, UNREACHABLE],
      ['down', 'down-model', 502, UNREACHABLE],
    ]);
    assert.equal(log.model, 'gpt-4o-mini');
    assert.equal(log.provider_id, 'openai');
    assert.equal(log.fallback_used, true);
  });

  it('retries a refused connection without a fallback, and the log keeps every try but the last', async () => {
    const { status, body, log } = await failing(hello({ model: 'down-model', ...retry(2) }));
    assert.equal(status, 502);
    assert.equal(body.error.code, 'upstream_unreachable');
    assert.equal(log.status_code, 502);
    assert.equal(log.error_message, UNREACHABLE);
    assert.equal(log.model, 'down-model');
    assert.equal(log.provider_id, 'down');
    assert.deepEqual(tries(log), [
      ['down', 'down-model', 502, UNREACHABLE],
      ['down', 'down-model', 502, UNREACHABLE],
    ]);
    assert.equal(log.fallback_used, false);
  });

  it("waits the retry-after of a provider's only key that answered 429, then answers", async () => {
    p.fake.behave(
      { kind: 'fail', status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '1' } },
      1,
    );
    const seen = p.fake.requests.length;
    const started = performance.now();
    const { data, log } = await chat(hello(retry(1, 0.01)));
    const waited = performance.now() - started;
    assert.equal(data.choices[0].message.content, 'Hello, world!');
    assert.ok(waited >= 950, `answered after ${waited} ms`);
    const sent = p.fake.requests.slice(seen);
    assert.deepEqual(
      sent.map((r) => r.headers.authorization),
      [`Bearer ${PROVIDER_KEY}`, `Bearer ${PROVIDER_KEY}`],
      'the same key, twice',
    );
    assert.deepEqual(tries(log), [['openai', 'gpt-4o-mini', 429, 'slow down']]);
  });

  it('spreads 400 calls over a 9:1 group within chance of 90/10', async () => {
    // The light model's count is Binomial(400, 0.1): mean 40, sd 6. Outside [12, 80] has probability
    // about 2e-8 (computed from the exact binomial tail), so this never fails by chance; equal weights
    // (mean 200), the weights reversed (360) or always the first model (0) land far outside it.
    const group = {
      load_balance_group: {
        models: [
          { model: 'gpt-4o', weight: 9 },
          { model: 'gpt-4o-mini', weight: 1 },
        ],
      },
    };
    const counts = new Map<string, number>();
    let next = 0;
    const worker = async () => {
      while (next < 400) {
        next++;
        const data = await p.client.chat.completions.create(hello({ model: 'gpt-3.5-turbo', ...group }));
        counts.set(data.model, (counts.get(data.model) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert.deepEqual([...counts.keys()].sort(), ['gpt-4o', 'gpt-4o-mini']);
    assert.equal(counts.get('gpt-4o')! + counts.get('gpt-4o-mini')!, 400);
    const light = counts.get('gpt-4o-mini')!;
    assert.ok(light >= 12 && light <= 80, `gpt-4o-mini answered ${light} of 400`);
  });

  describe('one log per call', () => {
    it('for a call retried twice, then answered', async () => {
      await assertOneLog(p, async (customer) => {
        p.fake.behave({ kind: 'fail', status: 503, body: { error: { message: 'busy' } } }, 2);
        const { log } = await chat(hello({ ...retry(3), customer_identifier: customer }));
        assert.equal(log.attempts.length, 2);
      });
    });

    it('for a streamed call retried twice, then answered', async () => {
      await assertOneLog(p, async (customer) => {
        p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 2);
        const stream = await p.client.chat.completions.create({
          ...hello({ ...retry(3), customer_identifier: customer }),
          stream: true,
        } as OpenAI.ChatCompletionCreateParamsStreaming);
        let text = '';
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
        assert.equal(text, 'Hello, world!');
      });
    });

    it('for a call that fell back, and for one where nothing answered', async () => {
      await assertOneLog(p, (customer) =>
        chat(
          hello({ model: 'down-model', ...retry(1), fallback_models: ['spare-model'], customer_identifier: customer }),
        ),
      );
      await assertOneLog(p, (customer) =>
        failing(hello({ model: 'down-model', ...retry(2), customer_identifier: customer })),
      );
    });
  });

  describe('the log of a call that did not answer', () => {
    it('when every provider failed: the last failure, every try before it, no fallback used', async () => {
      p.fake.behave({ kind: 'fail', status: 503, body: { error: { message: 'overloaded' } } }, 2);
      const seen = p.fake.requests.length;
      const { status, body, log } = await failing(
        hello({ model: 'down-model', ...retry(1), fallback_models: ['spare-model'] }),
      );
      assert.equal(status, 503);
      assert.equal(body.error.message, 'overloaded');
      assert.equal(p.fake.requests.length - seen, 2, 'the fallback tried twice');
      assert.equal(log.status_code, 503);
      assert.equal(log.error_message, 'overloaded');
      assert.equal(log.failed, true);
      assert.equal(log.model, 'spare-model');
      assert.equal(log.provider_id, 'spare');
      assert.deepEqual(tries(log), [
        ['down', 'down-model', 502, UNREACHABLE],
        ['down', 'down-model', 502, UNREACHABLE],
        ['spare', 'spare-model', 503, 'overloaded'],
      ]);
      // No fallback answered.
      assert.equal(log.fallback_used, false);
    });

    it('with disable_fallback: the fallback is never tried', async () => {
      const seen = p.fake.requests.length;
      const { status, log } = await failing(
        hello({ model: 'down-model', ...retry(1), fallback_models: ['spare-model'], disable_fallback: true }),
      );
      assert.equal(status, 502);
      assert.equal(p.fake.requests.length, seen, 'spare-model (on the fake) never called');
      assert.equal(log.status_code, 502);
      assert.equal(log.error_message, UNREACHABLE);
      assert.equal(log.model, 'down-model');
      assert.equal(log.provider_id, 'down');
      assert.deepEqual(tries(log), [['down', 'down-model', 502, UNREACHABLE]]);
      assert.equal(log.fallback_used, false);
    });

    it('when the stream broke after its first event: one upstream call, no retry, no attempts', async () => {
      p.fake.behave({ kind: 'stream-reset', after: 1 }, 1);
      p.fake.chat({ eventDelayMs: 20 });
      const seen = p.fake.requests.length;
      try {
        const { data: stream, response } = await p.client.chat.completions
          .create({
            ...hello({ ...retry(3), fallback_models: ['spare-model'] }),
            stream: true,
          } as OpenAI.ChatCompletionCreateParamsStreaming)
          .withResponse();
        await assert.rejects(async () => {
          for await (const chunk of stream) void chunk;
        });
        const log = await logWhenWritten(p.t, p.a, response.headers.get('x-gatelog-log-id'));
        await sleep(300);
        assert.equal(p.fake.requests.length - seen, 1, 'neither a retry nor the fallback');
        assert.equal(log.status_code, 502);
        assert.equal(log.failed, true);
        assert.equal(log.model, 'gpt-4o-mini');
        assert.deepEqual(tries(log), []);
        assert.equal(log.fallback_used, false);
      } finally {
        p.fake.chat();
      }
    });
  });

  describe('on other routes', () => {
    it('POST /api/responses moves to a fallback model, and retries', async () => {
      const fellBack = await p.client.responses
        .create({ model: 'down-model', input: 'hi', fallback_models: ['gpt-4o-mini'] } as never)
        .withResponse();
      assert.equal(fellBack.response.status, 200);
      assert.equal((p.fake.responses.at(-1)!.request.json as { model: string }).model, 'gpt-4o-mini');
      const log = await logNamedBy(p, fellBack.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'response');
      assert.equal(log.model, 'gpt-4o-mini');
      assert.equal(log.fallback_used, true);
      assert.deepEqual(tries(log), [['down', 'down-model', 502, UNREACHABLE]]);

      p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 1);
      const seen = p.fake.requests.length;
      const retried = await p.client.responses
        .create({ model: 'gpt-4o-mini', input: 'hi', ...retry(2) } as never)
        .withResponse();
      assert.equal(retried.response.status, 200);
      assert.equal(p.fake.requests.length - seen, 2);
      const retriedLog = await logNamedBy(p, retried.response.headers.get('x-gatelog-log-id'));
      assert.equal(retriedLog.status_code, 200);
      assert.deepEqual(tries(retriedLog), [['openai', 'gpt-4o-mini', 500, 'boom']]);
    });

    it('POST /api/audio/transcriptions retries, sending the whole file again', async () => {
      const file = audioPath('hello.wav');
      const sha256 = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
      p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 1);
      const seen = p.fake.requests.length;
      const res = await p.client.audio.transcriptions
        .create({
          file: fs.createReadStream(file),
          model: 'whisper-1',
          retry_params: JSON.stringify({ retry_enabled: true, num_retries: 2, retry_after: 0.01 }),
        } as never)
        .withResponse();
      assert.equal(res.response.status, 200);
      const sent = p.fake.requests.slice(seen);
      assert.equal(sent.length, 2);
      for (const r of sent) assert.equal((r.form!.file as { sha256: string }).sha256, sha256);
      const log = await logNamedBy(p, res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 200);
      assert.equal(log.transcript, 'Hello world.');
      assert.deepEqual(tries(log), [['openai', 'whisper-1', 500, 'boom']]);
    });

    it('POST /api/audio/transcriptions moves to a fallback model on another provider', async () => {
      // whisper-1 is the one transcription model: the fallback is the same model on the spare provider.
      p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 1);
      const seen = p.fake.requests.length;
      const res = await p.client.audio.transcriptions
        .create({
          file: fs.createReadStream(audioPath('hello.mp3')),
          model: 'whisper-1',
          fallback_models: JSON.stringify(['spare/whisper-1']),
        } as never)
        .withResponse();
      assert.equal(res.response.status, 200);
      const sent = p.fake.requests.slice(seen);
      assert.deepEqual(
        sent.map((r) => [r.headers.authorization, r.form!.model]),
        [
          [`Bearer ${PROVIDER_KEY}`, 'whisper-1'],
          ['Bearer spare-key-00000001', 'whisper-1'],
        ],
      );
      const log = await logNamedBy(p, res.response.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 200);
      assert.equal(log.provider_id, 'spare');
      assert.equal(log.fallback_used, true);
      assert.equal(log.transcript, 'Hello world.');
      assert.deepEqual(tries(log), [['openai', 'whisper-1', 500, 'boom']]);
    });
  });
});

describe('the circuit breaker through gatelog', () => {
  describe('skipping every provider', () => {
    let p: ProxyTestApp;
    before(async () => {
      p = await startProxyApp({ GATELOG_CIRCUIT_FAILURES: '1', GATELOG_CIRCUIT_COOLDOWN_MS: '600000' });
      await addProvider(p, 'down', `http://127.0.0.1:${await closedPort()}/v1`, ['down-model']);
      await addProvider(p, 'gone', `http://127.0.0.1:${await closedPort()}/v1`, ['gone-model']);
    });
    after(async () => {
      await p?.close();
    });

    it('logs the provider it skipped, and the ones before it as attempts', async () => {
      for (const model of ['down-model', 'gone-model']) {
        const res = await api(p.t.baseUrl, 'POST', '/api/chat/completions', { key: p.a.key, body: hello({ model }) });
        assert.equal(res.status, 502, res.text);
      }
      const post = (body: Body) => api(p.t.baseUrl, 'POST', '/api/chat/completions', { key: p.a.key, body });
      const alone = await post(hello({ model: 'down-model', ...retry(3) }));
      assert.equal(alone.status, 503, alone.text);
      assert.equal(alone.body.error.code, 'provider_unavailable');
      const aloneLog = await logNamedBy(p, alone.headers.get('x-gatelog-log-id'));
      assert.equal(aloneLog.status_code, 503);
      assert.equal(aloneLog.provider_id, 'down');
      assert.equal(aloneLog.model, 'down-model');
      assert.match(aloneLog.error_message, /Provider 'down' failed on every recent call/);
      assert.deepEqual(tries(aloneLog), []);

      const both = await post(hello({ model: 'down-model', ...retry(3), fallback_models: ['gone-model'] }));
      assert.equal(both.status, 503, both.text);
      const bothLog = await logNamedBy(p, both.headers.get('x-gatelog-log-id'));
      assert.equal(bothLog.provider_id, 'gone');
      assert.equal(bothLog.model, 'gone-model');
      assert.match(bothLog.error_message, /Provider 'gone' failed on every recent call/);
      assert.deepEqual(
        bothLog.attempts.map((a: LoggedAttempt) => [a.provider, a.model, a.status_code, a.latency]),
        [['down', 'down-model', 503, 0]],
      );
      assert.equal(bothLog.fallback_used, false);
    });
  });

  describe('recovering', () => {
    let p: ProxyTestApp;
    // Long enough that a slow machine still makes the calls that must find it open within it.
    const COOLDOWN_MS = 1000;
    const boom = () => p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 2);
    const post = () => api(p.t.baseUrl, 'POST', '/api/chat/completions', { key: p.a.key, body: hello() });
    /** Two 500s in a row: the circuit of the fake opens. */
    const open = async () => {
      boom();
      for (let i = 0; i < 2; i++) assert.equal((await post()).status, 500);
      const seen = p.fake.requests.length;
      const skipped = await post();
      assert.equal(skipped.status, 503, skipped.text);
      assert.equal(skipped.body.error.code, 'provider_unavailable');
      assert.equal(p.fake.requests.length, seen, 'skipped: nothing sent');
    };
    before(async () => {
      p = await startProxyApp({ GATELOG_CIRCUIT_FAILURES: '2', GATELOG_CIRCUIT_COOLDOWN_MS: String(COOLDOWN_MS) });
    });
    after(async () => {
      await p?.close();
    });

    it('after the cool-down lets one call through; its answer closes the circuit', async () => {
      await open();
      await sleep(COOLDOWN_MS + 100);
      const seen = p.fake.requests.length;
      const probe = await post();
      assert.equal(probe.status, 200, probe.text);
      for (let i = 0; i < 3; i++) assert.equal((await post()).status, 200);
      assert.equal(p.fake.requests.length - seen, 4, 'every call went to the provider again');
    });

    it('after the cool-down, a probe that fails opens it again at once', async () => {
      await open();
      await sleep(COOLDOWN_MS + 100);
      p.fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'still down' } } }, 1);
      const seen = p.fake.requests.length;
      assert.equal((await post()).status, 500, 'the probe went, and failed');
      const after = await post();
      assert.equal(after.status, 503, after.text);
      assert.equal(p.fake.requests.length - seen, 1, 'only the probe was sent');
      // And a new cool-down ends with a probe that answers.
      await sleep(COOLDOWN_MS + 100);
      assert.equal((await post()).status, 200);
      assert.equal((await post()).status, 200);
    });
  });
});
