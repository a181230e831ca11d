/**
 * POST /api/audio/transcriptions through the official client (every fixture, every response format,
 * the log and its cost), and the raw multipart form: validation, 415, a refused form's connection.
 * Platform parameters and provider errors: transcription-platform; uploads: transcription-uploads.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { describe, it } from 'node:test';
import { api } from '../support/harness.js';
import { logNamedBy, PROVIDER_KEY } from '../support/proxy-app.js';
import { schemaErrors } from '../support/openapi.js';
import { AUDIO_FIXTURES, audioPath } from '../support/audio.js';
import { a, client, fake, t, useProxyApp } from '../support/proxied-route.js';

const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
const WHISPER_PER_SECOND = 0.006 / 60;

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('POST /api/audio/transcriptions through the official openai client', () => {
  const logOf = (id: string | null) => logNamedBy({ t, a }, id);

  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '1500' });

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

  useProxyApp();

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
