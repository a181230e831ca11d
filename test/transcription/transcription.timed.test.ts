import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { api, type Tenant, type TestApp } from '../support/harness.js';
import { type ProxyTestApp, sendStreamedForm, startProxyApp } from '../support/proxy-app.js';
import { audioPath } from '../support/audio.js';
import { respondsWithin, stallBoundMs } from '../support/responsive.js';

describe('speech-to-text: large files do not hold the event loop', () => {
  let p: ProxyTestApp;
  let t: TestApp;
  let a: Tenant;

  before(async () => {
    p = await startProxyApp();
    ({ t, a } = p);
  });
  after(() => p.close());

  /**
   * Sends the form in 64 KB chunks: the client runs in this process too, and fetch holds the event loop
   * for 150–320 ms to send a 24 MB Buffer or FormData at once (measured), which is no part of gatelog.
   */
  const send = async (file: Buffer, filename: string) => {
    const fields: [string, string][] = [
      ['model', 'whisper-1'],
      ['response_format', 'text'],
    ];
    const res = await sendStreamedForm({ t, a }, fields, filename, [file]);
    await res.arrayBuffer();
    return res.status;
  };

  it('answers /health within 200 ms while 24 MB of MP3 frames without an index are read for their duration', async () => {
    const frames = fs.readFileSync(audioPath('hello.mpga'));
    const file = Buffer.concat(Array.from({ length: Math.ceil((24 * 1024 * 1024) / frames.length) }, () => frames));
    const { result, slowestMs, runs } = await respondsWithin(t.baseUrl, stallBoundMs(), () => send(file, 'long.mpga'));
    assert.equal(result, 200);
    assert.ok(slowestMs < stallBoundMs(), `slowest /health per run: ${runs.map((ms) => ms.toFixed(0)).join(', ')} ms`);
    await t.flush();
    const logs = await api(t.baseUrl, 'GET', '/api/request-logs/list/?page_size=1', { key: a.key });
    const duration = logs.body.results[0].audio_duration;
    assert.ok(duration > 5000, `${duration} s of repeated frames`);
  });

  it('answers /health within 200 ms while 24 MB of noise named .mp3 is tried as MP3', async () => {
    const noise = crypto.randomBytes(24 * 1024 * 1024);
    noise.write('noise', 0, 'latin1'); // starts like no audio format: only the name says mp3
    const { result, slowestMs, runs } = await respondsWithin(t.baseUrl, stallBoundMs(), () => send(noise, 'noise.mp3'));
    assert.ok([200, 400].includes(result), String(result));
    assert.ok(slowestMs < stallBoundMs(), `slowest /health per run: ${runs.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  });
});
