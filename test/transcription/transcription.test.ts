import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api, type Tenant, type TestApp } from '../support/harness.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { logNamedBy, PROVIDER_KEY, type ProxyTestApp, sendStreamedForm, startProxyApp } from '../support/proxy-app.js';
import { schemaErrors } from '../support/openapi.js';
import { AUDIO_FIXTURES, audioPath } from '../support/audio.js';

const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
const WHISPER_PER_SECOND = 0.006 / 60;

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('POST /api/audio/transcriptions through the official openai client', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  let client: OpenAI;

  const logOf = (id: string | null) => logNamedBy({ t, a }, id);

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '1500' });
    ({ fake, t, a, client } = p);
  });
  beforeEach(() => fake.behave({ kind: 'ok' }));
  after(() => p.close());

  it('transcribes every fixture in every response format, forwarding the file as it came', async () => {
    for (const fixture of AUDIO_FIXTURES) {
      for (const format of RESPONSE_FORMATS) {
        const where = `${fixture.file} as ${format}`;
        const res = await client.audio.transcriptions
          .create({ file: fs.createReadStream(audioPath(fixture.file)), model: 'whisper-1', response_format: format })
          .withResponse();
        assert.equal(res.response.status, 200, where);
        const logId = res.response.headers.get('x-gatelog-log-id');
        assert.ok(logId, where);
        const sent = fake.requests.at(-1)!;
        assert.equal(sent.path, '/v1/audio/transcriptions');
        assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
        const file = sent.form!.file as { filename: string; size: number; sha256: string };
        assert.equal(file.filename, fixture.file, where);
        assert.equal(file.sha256, sha256(audioPath(fixture.file)), where);
        assert.deepEqual(Object.keys(sent.form!).sort(), ['file', 'model', 'response_format'], where);
        assert.equal(sent.form!.response_format, format);
        const type = res.response.headers.get('content-type') ?? '';
        if (format === 'json') {
          assert.ok(type.startsWith('application/json'), where);
          assert.deepEqual(schemaErrors('CreateTranscriptionResponseJson', res.data), [], where);
        } else if (format === 'verbose_json') {
          assert.ok(type.startsWith('application/json'), where);
          assert.deepEqual(schemaErrors('CreateTranscriptionResponseVerboseJson', res.data), [], where);
        } else {
          assert.ok(type.startsWith('text/plain'), where);
          assert.equal(typeof res.data, 'string', where);
          assert.match(res.data as unknown as string, /Hello world\./, where);
        }
        const log = await logOf(logId);
        assert.equal(log.log_type, 'transcription', where);
        assert.equal(log.status_code, 200, where);
        assert.equal(JSON.parse(log.input).file.format, fixture.format, where);
        assert.equal(log.transcript, 'Hello world.', where);
      }
    }
  });

  it('logs the call: the file described (never its bytes), the answer, duration, transcript and cost', async () => {
    const res = await client.audio.transcriptions
      .create({
        file: fs.createReadStream(audioPath('hello.wav')),
        model: 'whisper-1',
        response_format: 'verbose_json',
        timestamp_granularities: ['word', 'segment'],
        language: 'en',
        prompt: 'A greeting.',
        temperature: 0.2,
      })
      .withResponse();
    assert.deepEqual(schemaErrors('CreateTranscriptionResponseVerboseJson', res.data), []);
    assert.equal(res.data.words?.length, 2);
    const sent = fake.requests.at(-1)!.form!;
    assert.deepEqual(sent['timestamp_granularities[]'], ['word', 'segment']);
    assert.equal(sent.language, 'en');
    assert.equal(sent.prompt, 'A greeting.');
    assert.equal(sent.temperature, '0.2');

    const log = await logOf(res.response.headers.get('x-gatelog-log-id')!);
    assert.equal(log.log_method, 'inference');
    assert.equal(log.model, 'whisper-1');
    assert.equal(log.provider_id, 'openai');
    assert.deepEqual(JSON.parse(log.input), {
      model: 'whisper-1',
      file: { filename: 'hello.wav', format: 'wav', bytes: 40360, duration_seconds: 1.259875 },
      language: 'en',
      prompt: 'A greeting.',
      response_format: 'verbose_json',
      temperature: 0.2,
      timestamp_granularities: ['word', 'segment'],
    });
    assert.deepEqual(JSON.parse(log.output), res.data);
    assert.equal(log.audio_duration, 1.26, "the provider's duration wins");
    assert.equal(log.cost, Number((1.26 * WHISPER_PER_SECOND).toPrecision(12)));
    assert.equal(log.transcript, 'Hello world.');
    assert.ok(log.latency >= 0 && log.routing_time >= 0);
    assert.equal(log.used_custom_credential, false);
  });

  it('reads the duration from the file when the provider does not say it, within 0.15 s, and costs it', async () => {
    for (const fixture of AUDIO_FIXTURES) {
      const res = await client.audio.transcriptions
        .create({ file: fs.createReadStream(audioPath(fixture.file)), model: 'whisper-1', response_format: 'text' })
        .withResponse();
      const log = await logOf(res.response.headers.get('x-gatelog-log-id')!);
      const where = `${fixture.file}: ${log.audio_duration} s, expected ${fixture.seconds}`;
      assert.ok(Math.abs(log.audio_duration - fixture.seconds) <= 0.15, where);
      assert.equal(JSON.parse(log.input).file.duration_seconds, log.audio_duration, where);
      assert.equal(log.cost, Number((log.audio_duration * WHISPER_PER_SECOND).toPrecision(12)), where);
    }
  });

  it("takes json's usage seconds over the file's duration", async () => {
    const res = await client.audio.transcriptions
      .create({ file: fs.createReadStream(audioPath('hello.mp3')), model: 'whisper-1' })
      .withResponse();
    assert.deepEqual(res.data, { text: 'Hello world.', usage: { type: 'duration', seconds: 2 } });
    const log = await logOf(res.response.headers.get('x-gatelog-log-id')!);
    assert.equal(log.audio_duration, 2);
    assert.equal(log.cost, 0.0002);
    assert.equal(JSON.parse(log.input).file.duration_seconds, 1.332);
  });
});

describe('POST /api/audio/transcription(s): raw multipart, validation and platform parameters', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  const wav = fs.readFileSync(audioPath('hello.wav'));

  type Part = [name: string, value: string] | [name: string, value: Buffer, filename: string, type?: string];
  const postForm = async (parts: Part[], path = '/api/audio/transcriptions') => {
    const form = new FormData();
    for (const [name, value, filename, type] of parts) {
      if (typeof value === 'string') form.append(name, value);
      else form.append(name, new Blob([value], { type: type ?? 'application/octet-stream' }), filename);
    }
    const res = await fetch(`${t.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}` },
      body: form,
    });
    const text = await res.text();
    const json = (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : null;
    return { status: res.status, headers: res.headers, body: json, text };
  };
  const logOf = (id: string | null) => logNamedBy({ t, a }, id);

  before(async () => {
    p = await startProxyApp();
    ({ fake, t, a } = p);
  });
  after(() => p.close());

  it('reads the fields before the file on the singular path, with a generic content type', async () => {
    const res = await postForm(
      [
        ['model', 'whisper-1'],
        ['response_format', 'text'],
        ['file', wav, 'voice.wav'],
      ],
      '/api/audio/transcription',
    );
    assert.equal(res.status, 200);
    assert.equal(res.text, 'Hello world.\n');
    const file = fake.requests.at(-1)!.form!.file as { filename: string; type: string; size: number };
    assert.deepEqual([file.filename, file.type, file.size], ['voice.wav', 'audio/wav', wav.length]);
  });

  it('refuses each invalid field with a 400 naming it, sends nothing upstream and logs the call', async () => {
    const file: Part = ['file', wav, 'hello.wav'];
    const model: Part = ['model', 'whisper-1'];
    const cases: { parts: Part[]; param: string | null; code?: string; status?: number }[] = [
      { parts: [['file', 'hello.wav'], model], param: 'file' },
      { parts: [model], param: 'file' },
      { parts: [['file', Buffer.alloc(0), 'empty.wav'], model], param: 'file' },
      {
        parts: [['file', Buffer.from('just some text'), 'notes.txt'], model],
        param: 'file',
        code: 'invalid_file_format',
      },
      {
        parts: [['file', Buffer.from('not audio at all'), 'fake.wav'], model],
        param: 'file',
        code: 'invalid_file_format',
      },
      { parts: [file], param: 'model' },
      { parts: [file, ['model', 'gpt-4o-transcribe']], param: 'model' },
      { parts: [file, model, ['language', 'english']], param: 'language' },
      { parts: [file, model, ['language', 'zz']], param: 'language' },
      { parts: [file, model, ['response_format', 'xml']], param: 'response_format' },
      { parts: [file, model, ['temperature', '1.5']], param: 'temperature' },
      { parts: [file, model, ['temperature', 'warm']], param: 'temperature' },
      { parts: [file, model, ['timestamp_granularities[]', 'word']], param: 'timestamp_granularities' },
      {
        parts: [file, model, ['response_format', 'verbose_json'], ['timestamp_granularities[]', 'char']],
        param: 'timestamp_granularities',
      },
      { parts: [file, model, ['stream', 'true']], param: 'stream' },
      { parts: [file, model, ['speed', 'fast']], param: 'speed', code: 'unknown_parameter' },
      { parts: [file, model, ['metadata', 'not json']], param: 'metadata' },
      { parts: [file, model, ['disable_log', 'maybe']], param: 'disable_log' },
      { parts: [file, model, ['file', wav, 'second.wav']], param: 'file' },
      { parts: [file, model, ['attachment', wav, 'other.wav']], param: 'attachment' },
    ];
    for (const c of cases) {
      const before = fake.requests.length;
      const where = JSON.stringify(c.parts.map((p) => [p[0], typeof p[1] === 'string' ? p[1] : p[2]]));
      const res = await postForm(c.parts);
      assert.equal(res.status, c.status ?? 400, `${where}: ${res.text}`);
      assert.equal(res.body.error.param, c.param, where);
      if (c.code) assert.equal(res.body.error.code, c.code, where);
      assert.equal(fake.requests.length, before, `${where}: nothing goes upstream`);
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.log_type, 'transcription', where);
      assert.equal(log.status_code, c.status ?? 400, where);
      assert.equal(log.failed, true, where);
      assert.equal(log.error_message, res.body.error.message, where);
      assert.equal(log.cost, 0, where);
    }
  });

  it('answers 415 to a body that is not multipart, and logs it', async () => {
    const res = await api(t.baseUrl, 'POST', '/api/audio/transcriptions', {
      key: a.key,
      body: { model: 'whisper-1', file: 'hello.wav' },
    });
    assert.equal(res.status, 415);
    assert.match(res.body.error.message, /multipart\/form-data/);
    const log = await logOf(res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 415);
  });

  it('reads the next request on the connection after a form refused before its end (found by the form fuzz)', async () => {
    // A field that is refused at once, then a file nobody reads: the parser stops at the file, and the
    // rest of the body sat unread, so the connection's next request was never answered.
    const boundary = 'refused-early';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="__proto__[x]"\r\n\r\n1\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n`),
      wav,
      Buffer.alloc(2 * 1024 * 1024, 5),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const socket = net.connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.write(
      `POST /api/audio/transcriptions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${a.key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const answers = () => received.match(/HTTP\/1\.1 \d{3}/g) ?? [];
    for (let i = 0; i < 300 && answers().length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    assert.deepEqual(answers(), ['HTTP/1.1 400', 'HTTP/1.1 200'], received.slice(0, 300));
  });

  it('answers 401 without a valid key, logging nothing', async () => {
    const res = await fetch(`${t.baseUrl}/api/audio/transcriptions`, { method: 'POST', body: new FormData() });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-gatelog-log-id'), null);
  });
});

describe('POST /api/audio/transcriptions: platform parameters, provider errors and large uploads', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  let client: OpenAI;
  const CUSTOMER_KEY = 'sk-customer-own-key-5678';

  const logOf = (id: string | null) => logNamedBy({ t, a }, id);
  const upload = () => fs.createReadStream(audioPath('hello.m4a'));

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '1000' });
    ({ fake, t, a, client } = p);
  });
  beforeEach(() => fake.behave({ kind: 'ok' }));
  after(() => p.close());

  it('takes platform parameters in the bracket form the client writes; none reaches the provider', async () => {
    const res = await client.audio.transcriptions
      .create({
        file: upload(),
        model: 'whisper-1',
        // The client writes objects as metadata[plan]=pro and booleans as "true".
        metadata: { plan: 'pro', seats: 3 },
        customer_identifier: 'cust-7',
        customer_email: 'seven@example.com',
        thread_identifier: 'thread-1',
        customer_credentials: { openai: { api_key: CUSTOMER_KEY } },
        request_breakdown: true,
      } as unknown as OpenAI.Audio.TranscriptionCreateParamsNonStreaming<'json'>)
      .withResponse();
    const sent = fake.requests.at(-1)!;
    assert.deepEqual(Object.keys(sent.form!).sort(), ['file', 'model', 'response_format']);
    assert.equal(sent.headers.authorization, `Bearer ${CUSTOMER_KEY}`);
    const body = res.data as unknown as { text: string; request_breakdown: Record<string, unknown> };
    assert.equal(body.text, 'Hello world.');
    const breakdown = body.request_breakdown;
    assert.equal(breakdown.category, 'transcription');
    assert.equal(breakdown.model, 'whisper-1');
    assert.equal(breakdown.cost, 0.0002);
    assert.deepEqual(breakdown.metadata, { plan: 'pro', seats: '3' });
    assert.deepEqual(breakdown.full_request, {
      model: 'whisper-1',
      response_format: 'json',
      file: { filename: 'hello.m4a', bytes: 4904, format: 'm4a' },
    });
    assert.ok(!JSON.stringify(body).includes(CUSTOMER_KEY));

    const log = await logOf(res.response.headers.get('x-gatelog-log-id'));
    assert.deepEqual(log.metadata, { plan: 'pro', seats: '3' });
    assert.equal(log.customer_identifier, 'cust-7');
    assert.equal(log.customer_email, 'seven@example.com');
    assert.equal(log.thread_identifier, 'thread-1');
    assert.equal(log.used_custom_credential, true);
    assert.ok(!JSON.stringify(log).includes(CUSTOMER_KEY), 'customer_credentials is never stored');
  });

  it('takes platform parameters as JSON text fields; disable_log keeps metrics only', async () => {
    const form = new FormData();
    form.append('file', new Blob([fs.readFileSync(audioPath('hello.flac'))]), 'hello.flac');
    form.append('model', 'whisper-1');
    form.append('response_format', 'srt');
    form.append('metadata', JSON.stringify({ source: 'json-text' }));
    form.append('customer_credentials', JSON.stringify({ openai: { api_key: CUSTOMER_KEY } }));
    form.append('disable_log', '1');
    form.append('request_breakdown', 'true');
    const res = await fetch(`${t.baseUrl}/api/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}` },
      body: form,
    });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('content-type')!.startsWith('text/plain'));
    assert.match(await res.text(), /^1\n00:00:00,000 --> /);
    const breakdown = JSON.parse(res.headers.get('x-request-breakdown')!);
    assert.equal(breakdown.category, 'transcription');
    assert.deepEqual(breakdown.metadata, { source: 'json-text' });
    const sent = fake.requests.at(-1)!;
    assert.deepEqual(Object.keys(sent.form!).sort(), ['file', 'model', 'response_format']);
    assert.equal(sent.headers.authorization, `Bearer ${CUSTOMER_KEY}`);

    const log = await logOf(res.headers.get('x-gatelog-log-id'));
    assert.deepEqual(log.metadata, { source: 'json-text' });
    assert.equal(log.input, null);
    assert.equal(log.output, null);
    assert.equal(log.transcript, null);
    assert.ok(Math.abs(log.audio_duration - 1.26) < 0.01, 'metrics are kept');
    assert.ok(log.cost > 0);
  });

  it("sends a text answer's breakdown as an ASCII header, a long prompt cut to fit", async () => {
    const form = new FormData();
    form.append('file', new Blob([fs.readFileSync(audioPath('hello.ogg'))]), 'hello.ogg');
    form.append('model', 'whisper-1');
    form.append('response_format', 'vtt');
    form.append('prompt', 'é'.repeat(5000));
    form.append('metadata[note]', 'café ☕ 日本');
    form.append('request_breakdown', 'true');
    const res = await fetch(`${t.baseUrl}/api/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}` },
      body: form,
    });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^WEBVTT/);
    const header = res.headers.get('x-request-breakdown')!;
    assert.ok(header.length <= 8192, `${header.length} characters`);
    assert.match(header, /^[\x20-\x7e]+$/);
    const breakdown = JSON.parse(header);
    assert.deepEqual(breakdown.metadata, { note: 'café ☕ 日本' });
    assert.equal(breakdown.full_request.prompt, 'é'.repeat(1000));
    assert.deepEqual(breakdown.truncated_fields, ['full_request.prompt']);
    const log = await logOf(res.headers.get('x-gatelog-log-id'));
    assert.equal(JSON.parse(log.input).prompt, 'é'.repeat(5000), 'the log keeps the whole prompt');
  });

  it("passes the provider's errors through and answers 502/504 when it fails, logging each", async () => {
    const providerError = { error: { message: 'Rate limit reached', type: 'requests', param: null, code: null } };
    fake.behave({ kind: 'fail', status: 429, body: providerError, headers: { 'x-request-id': 'req_429' } }, 1);
    const limited = await client.audio.transcriptions.create({ file: upload(), model: 'whisper-1' }).catch((e) => e);
    assert.ok(limited instanceof OpenAI.APIError);
    assert.equal(limited.status, 429);
    assert.equal(limited.message, '429 Rate limit reached');
    assert.equal(limited.requestID, 'req_429');
    const log429 = await logOf(limited.headers.get('x-gatelog-log-id'));
    assert.equal(log429.status_code, 429);
    assert.equal(log429.error_message, 'Rate limit reached');
    assert.ok(log429.audio_duration > 1.2 && log429.audio_duration < 1.4, 'a failed call keeps the duration');
    assert.equal(JSON.parse(log429.input).file.duration_seconds, log429.audio_duration);
    assert.equal(log429.cost, 0);

    fake.behave({ kind: 'drop' }, 1);
    const dropped = await client.audio.transcriptions.create({ file: upload(), model: 'whisper-1' }).catch((e) => e);
    assert.equal(dropped.status, 502);
    assert.equal((await logOf(dropped.headers.get('x-gatelog-log-id'))).status_code, 502);

    fake.behave({ kind: 'hang' }, 1);
    const hung = await client.audio.transcriptions.create({ file: upload(), model: 'whisper-1' }).catch((e) => e);
    assert.equal(hung.status, 504);
    const log504 = await logOf(hung.headers.get('x-gatelog-log-id'));
    assert.equal(log504.status_code, 504);
    assert.ok(log504.latency >= 0.9, 'the wait is the log latency');
  });

  it('accepts a chunked upload without a length, up to 25 MB', async () => {
    // 24 MB of the WAV file's samples repeated: a real WAV header, then silence-like noise.
    const wav = fs.readFileSync(audioPath('hello.wav'));
    const size = 24 * 1024 * 1024;
    function* file() {
      yield wav;
      for (let sent = wav.length; sent < size; sent += 1024 * 1024)
        yield Buffer.alloc(Math.min(1024 * 1024, size - sent), 7);
    }
    const fields: [string, string][] = [
      ['model', 'whisper-1'],
      ['response_format', 'text'],
    ];
    const res = await sendStreamedForm({ t, a }, fields, 'long.wav', file());
    assert.equal(res.status, 200, await res.clone().text());
    // Passed on while it arrived, so without a length either (see "passes the upload on" below).
    assert.equal(fake.requests.at(-1)!.headers['transfer-encoding'], 'chunked');
    assert.equal((fake.requests.at(-1)!.form!.file as { size: number }).size, size);
  });

  it('refuses a 26 MB file with 413 through the client', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-audio-'));
    const big = path.join(dir, 'big.wav');
    const wav = fs.readFileSync(audioPath('hello.wav'));
    fs.writeFileSync(big, Buffer.concat([wav, Buffer.alloc(26 * 1024 * 1024 - wav.length, 1)]));
    const before = fake.requests.length;
    try {
      const err = await client.audio.transcriptions
        .create({ file: fs.createReadStream(big), model: 'whisper-1' })
        .catch((e) => e);
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.status, 413);
      assert.equal((err.error as { code: string }).code, 'file_too_large');
      assert.equal(fake.requests.length, before);
      assert.equal((await logOf(err.headers.get('x-gatelog-log-id'))).status_code, 413);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers 413 as soon as a file passes 25 MB, before the client has sent the rest of 200 MB, holding none of it', async () => {
    let produced = 0;
    function* file() {
      const chunk = Buffer.alloc(1024 * 1024, 3);
      for (; produced < 200 * 1024 * 1024; produced += chunk.length) yield chunk;
    }
    global.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      const res = await sendStreamedForm({ t, a }, [['model', 'whisper-1']], 'huge.wav', file());
      assert.equal(res.status, 413);
      assert.equal(((await res.json()) as { error: { param: string } }).error.param, 'file');
      const log = await logOf(res.headers.get('x-gatelog-log-id'));
      assert.equal(log.status_code, 413);
    } finally {
      clearInterval(sampler);
    }
    const grown = (peak - base) / (1024 * 1024);
    assert.ok(grown < 100, `RSS grew by ${grown.toFixed(0)} MB`);
    assert.ok(produced < 100 * 1024 * 1024, `the answer came after ${produced} bytes`);
  });
});

describe('POST /api/audio/transcriptions: the memory all uploads may hold', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    p = await startProxyApp({ GATELOG_UPLOAD_MEMORY_BYTES: '100000' });
    ({ fake, t, a } = p);
  });
  after(() => p.close());

  const send = async (file: Buffer) => {
    const form = new FormData();
    form.append('file', new Blob([file]), 'speech.wav');
    form.append('model', 'whisper-1');
    return fetch(`${t.baseUrl}/api/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}` },
      body: form,
    });
  };

  it('refuses an upload past GATELOG_UPLOAD_MEMORY_BYTES with 503 and Retry-After, and gives back what calls held', async () => {
    const wav = fs.readFileSync(audioPath('hello.wav'));
    const sixty = Buffer.concat([wav, Buffer.alloc(60_000 - wav.length)]);
    // Each of these holds 60 KB of the 100 KB: the second fits only if the first gave its share back.
    for (let i = 0; i < 3; i++) assert.equal((await send(sixty)).status, 200);
    const before = fake.requests.length;
    const refused = await send(Buffer.concat([wav, Buffer.alloc(150_000 - wav.length)]));
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    const body = (await refused.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'upload_memory_full');
    assert.equal(fake.requests.length, before);
    await t.flush();
    const log = await api(t.baseUrl, 'GET', `/api/request-logs/${refused.headers.get('x-gatelog-log-id')}/`, {
      key: a.key,
    });
    assert.equal(log.body.status_code, 503);
    // A refused upload gives back what it held, and so does a call the provider fails.
    fake.behave({ kind: 'fail', status: 500, body: { error: { message: 'boom' } } }, 2);
    assert.equal((await send(sixty)).status, 500);
    assert.equal((await send(sixty)).status, 500);
    assert.equal((await send(sixty)).status, 200);
  });
});

describe('POST /api/audio/transcriptions passes the upload on while it arrives', () => {
  let p: ProxyTestApp;
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    p = await startProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '1000' });
    ({ fake, t, a } = p);
  });
  after(() => p.close());

  const wav = () => fs.readFileSync(audioPath('hello.wav'));
  /** A WAV file of `size` bytes: the fixture's header and samples, then filler. */
  const bigWav = (size: number) => [wav(), Buffer.alloc(size - wav().length, 3)];
  const fileHash = (pieces: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(pieces)).digest('hex');

  /** Waits until the provider has seen `count` requests cut off before their end. */
  async function abandonedReaches(count: number) {
    for (let i = 0; i < 100 && fake.abandoned < count; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(fake.abandoned, count, 'the form on its way upstream was cut off before its end');
  }

  it('sends the file upstream before the fields that follow it arrive, and waits for the answer from the end', async () => {
    const before = fake.requests.length;
    const pieces = bigWav(3 * 1024 * 1024);
    // The file, then a pause longer than the upstream timeout (1 s), then model: the provider's wait
    // starts when the form is whole, so this is no 504.
    const res = await sendStreamedForm({ t, a }, [], 'long.wav', pieces, {
      after: [
        ['model', 'whisper-1'],
        ['response_format', 'verbose_json'],
      ],
      pauseMs: 1300,
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(fake.requests.length, before + 1);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.headers['transfer-encoding'], 'chunked');
    assert.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    const file = sent.form!.file as { filename: string; type: string; size: number; sha256: string };
    assert.deepEqual(file, {
      filename: 'long.wav',
      type: 'audio/wav',
      size: 3 * 1024 * 1024,
      sha256: fileHash(pieces),
    });
    assert.equal(sent.form!.model, 'whisper-1');
    assert.equal(sent.form!.response_format, 'verbose_json');
    const log = await logNamedBy({ t, a }, res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 200);
    assert.ok(log.latency < 1, `latency ${log.latency} s is the provider's, not the upload's`);
    assert.ok(log.routing_time >= 1.2, `routing_time ${log.routing_time} s holds the upload`);
  });

  it('cuts off the form it started when a field after the file refuses the call: the provider never gets it whole', async () => {
    const before = fake.requests.length;
    const abandoned = fake.abandoned;
    const res = await sendStreamedForm({ t, a }, [], 'long.wav', bigWav(2 * 1024 * 1024), {
      after: [['model', 'whisper-2']],
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { param: string } }).error.param, 'model');
    await abandonedReaches(abandoned + 1);
    assert.equal(fake.requests.length, before, 'nothing reached the provider whole');
    const log = await logNamedBy({ t, a }, res.headers.get('x-gatelog-log-id'));
    assert.equal(log.status_code, 400);
  });

  it("sends the call again with the caller's own key when customer_credentials follow the file", async () => {
    const before = fake.requests.length;
    const abandoned = fake.abandoned;
    const res = await sendStreamedForm({ t, a }, [], 'long.wav', bigWav(1024 * 1024), {
      after: [
        ['model', 'whisper-1'],
        ['customer_credentials[openai][api_key]', 'sk-the-callers-own-key'],
      ],
    });
    assert.equal(res.status, 200, await res.clone().text());
    await abandonedReaches(abandoned + 1);
    assert.equal(fake.requests.length, before + 1, 'one call reached the provider whole');
    assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer sk-the-callers-own-key');
    assert.equal((fake.requests.at(-1)!.form!.file as { size: number }).size, 1024 * 1024);
  });

  it('cuts off the form it started when the caller stops sending midway', async () => {
    const before = fake.requests.length;
    const abandoned = fake.abandoned;
    const boundary = 'cut-short';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n`);
    const socket = net.connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/audio/transcriptions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${a.key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 5000000\r\n\r\n`,
    );
    socket.write(head);
    for (const piece of bigWav(1024 * 1024)) socket.write(piece);
    // The form is on its way upstream before the upload is over; then the caller goes away.
    const begun = fake.begun;
    for (let i = 0; i < 200 && fake.begun === begun; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(fake.begun, begun + 1, 'the provider was called while the upload arrived');
    socket.destroy();
    await abandonedReaches(abandoned + 1);
    assert.equal(fake.requests.length, before);
  });
});
