/**
 * POST /api/audio/transcriptions and its uploads: the memory all uploads may hold, and the upload
 * passed on upstream while it arrives (cut off when the call is refused or the caller stops).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { describe, it } from 'node:test';
import { api } from '../support/harness.js';
import { logNamedBy, PROVIDER_KEY, sendStreamedForm } from '../support/proxy-app.js';
import { audioPath } from '../support/audio.js';
import { pollUntil } from '../support/poll.js';
import { a, fake, t, useProxyApp } from '../support/proxied-route.js';

describe('POST /api/audio/transcriptions: the memory all uploads may hold', () => {
  useProxyApp({ GATELOG_UPLOAD_MEMORY_BYTES: '100000' });

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
  useProxyApp({ GATELOG_UPSTREAM_TIMEOUT_MS: '1000' });

  const wav = () => fs.readFileSync(audioPath('hello.wav'));
  /** A WAV file of `size` bytes: the fixture's header and samples, then filler. */
  const bigWav = (size: number) => [wav(), Buffer.alloc(size - wav().length, 3)];
  const fileHash = (pieces: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(pieces)).digest('hex');

  /** Waits until the provider has seen `count` requests cut off before their end (a loaded machine: 10 s). */
  async function abandonedReaches(count: number) {
    await pollUntil(async () => fake.abandoned >= count, 'the form on its way upstream to be cut off before its end', {
      ms: 10_000,
      detail: async () => `${fake.abandoned} cut off, ${count} awaited`,
    });
    assert.equal(fake.abandoned, count, 'the form on its way upstream was cut off before its end');
  }
  /**
   * Waits until the provider has begun the call gatelog passes the file on in: the fields after the
   * file are sent only then, or on a loaded machine all of the form could be read before the call began,
   * and a call refused by them would never reach the provider at all.
   */
  const providerCalled = (begun: number) => () =>
    pollUntil(async () => fake.begun > begun, 'the provider to be called while the upload arrives', { ms: 10_000 });

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
      beforeAfter: providerCalled(fake.begun),
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
      beforeAfter: providerCalled(fake.begun),
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
    const begun = fake.begun;
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
    await providerCalled(begun)();
    assert.equal(fake.begun, begun + 1, 'the provider was called while the upload arrived');
    socket.destroy();
    await abandonedReaches(abandoned + 1);
    assert.equal(fake.requests.length, before);
  });
});
