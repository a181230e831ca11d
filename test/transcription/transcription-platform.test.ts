/**
 * POST /api/audio/transcriptions: platform parameters (bracket form, JSON fields, disable_log, the
 * breakdown header), the provider's errors and failures, and uploads at and past 25 MB.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { logNamedBy, sendStreamedForm } from '../support/proxy-app.js';
import { audioPath } from '../support/audio.js';
import { a, client, fake, t, useProxyApp } from '../support/proxied-route.js';

describe('POST /api/audio/transcriptions: platform parameters, provider errors and large uploads', () => {
  const CUSTOMER_KEY = 'sk-customer-own-key-5678';

  const logOf = (id: string | null) => logNamedBy({ t, a }, id);
  const upload = () => fs.createReadStream(audioPath('hello.m4a'));

  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '1000' });

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
