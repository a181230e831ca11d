import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { api, startApp, type Tenant, type TestApp } from './support/harness.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { schemaErrors } from './support/openapi.js';
import { AUDIO_FIXTURES, audioPath } from './support/audio.js';

const PROVIDER_KEY = 'sk-registered-provider-key-1234';
const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
const WHISPER_PER_SECOND = 0.006 / 60;

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('POST /api/audio/transcriptions through the official openai client', () => {
  let fake: FakeUpstream;
  let t: TestApp;
  let a: Tenant;
  let client: OpenAI;

  const logOf = async (id: string) => {
    await t.flush();
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
    assert.equal(res.status, 200);
    return res.body;
  };

  before(async () => {
    fake = await startFakeUpstream();
    t = await startApp({ env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl, GATELOG_UPSTREAM_TIMEOUT_MS: '1500' } });
    a = await t.tenant();
    await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
    client = new OpenAI({ apiKey: a.key, baseURL: `${t.baseUrl}/api`, maxRetries: 0 });
  });
  beforeEach(() => fake.behave({ kind: 'ok' }));
  after(async () => {
    await t.close();
    await fake.close();
  });

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
  const logOf = async (id: string | null) => {
    assert.ok(id, 'the answer names its log');
    await t.flush();
    const res = await api(t.baseUrl, 'GET', `/api/request-logs/${id}/`, { key: a.key });
    assert.equal(res.status, 200);
    return res.body;
  };

  before(async () => {
    fake = await startFakeUpstream();
    t = await startApp({ env: { GATELOG_OPENAI_BASE_URL: fake.baseUrl } });
    a = await t.tenant();
    await api(t.baseUrl, 'POST', '/api/provider-keys/', {
      key: a.key,
      body: { provider: 'openai', api_key: PROVIDER_KEY },
    });
  });
  after(async () => {
    await t.close();
    await fake.close();
  });

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

  it('answers 401 without a valid key, logging nothing', async () => {
    const res = await fetch(`${t.baseUrl}/api/audio/transcriptions`, { method: 'POST', body: new FormData() });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-gatelog-log-id'), null);
  });
});
