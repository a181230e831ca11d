import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { flacWithComments, m4aWithItems, mp3WithTag, opusWithComments, wavWithList } from '../support/crafted-audio.js';
import { logNamedBy, type ProxyTestApp, sendStreamedForm, startProxyApp } from '../support/proxy-app.js';
import { respondsWithin, stallBoundMs } from '../support/responsive.js';

/**
 * Files whose metadata is built to be slow to parse (support/crafted-audio.ts). For MP3, FLAC and WAV the
 * metadata is skipped by its size headers, so the duration is the audio's own; for the other formats it
 * is parsed on a worker thread under a deadline and a heap limit, so it may come out as null (unknown).
 */
const CASES: { name: string; build: () => Buffer; filename: string; seconds: number; mayBeUnknown: boolean }[] = [
  {
    name: 'an MP3 behind an ID3v2 tag of 100,000 tiny frames',
    build: () => mp3WithTag(100_000),
    filename: 'tagged.mp3',
    seconds: 1.332,
    mayBeUnknown: false,
  },
  {
    name: 'a FLAC with a VORBIS_COMMENT of 500,000 comments',
    build: () => flacWithComments(500_000),
    filename: 'tagged.flac',
    seconds: 1.259875,
    mayBeUnknown: false,
  },
  {
    name: 'a WAV with a 3.8 MB LIST/INFO chunk',
    build: () => wavWithList(380_000),
    filename: 'tagged.wav',
    seconds: 1.259875,
    mayBeUnknown: false,
  },
  {
    name: 'an M4A with an ilst of 400,000 items',
    build: () => m4aWithItems(400_000),
    filename: 'tagged.m4a',
    seconds: 1.323875,
    mayBeUnknown: true,
  },
  {
    name: 'an Ogg Opus with OpusTags of 1,000,000 comments',
    build: () => opusWithComments(1_000_000),
    filename: 'tagged.ogg',
    seconds: 1.259875,
    mayBeUnknown: true,
  },
];

describe('speech-to-text: hostile metadata does not hold the event loop', () => {
  let p: ProxyTestApp;

  before(async () => {
    p = await startProxyApp();
  });
  after(() => p.close());

  for (const c of CASES) {
    it(`answers /health within 200 ms while ${c.name} is read, and logs the call`, async (t) => {
      const file = c.build();
      const send = async () => {
        const fields: [string, string][] = [
          ['model', 'whisper-1'],
          ['response_format', 'text'],
        ];
        const res = await sendStreamedForm(p, fields, c.filename, [file]);
        await res.arrayBuffer();
        return { status: res.status, logId: res.headers.get('x-gatelog-log-id') };
      };
      const { result, slowestMs, runs } = await respondsWithin(p.t.baseUrl, stallBoundMs(), send, { strict: true });
      t.diagnostic(
        `${(file.length / 1e6).toFixed(1)} MB; slowest /health per run: ${runs.map((ms) => ms.toFixed(0)).join(', ')} ms`,
      );
      assert.equal(result.status, 200);
      assert.ok(
        slowestMs < stallBoundMs(),
        `slowest /health per run: ${runs.map((ms) => ms.toFixed(0)).join(', ')} ms`,
      );
      const log = await logNamedBy(p, result.logId);
      assert.equal(log.status_code, 200);
      const seconds = JSON.parse(log.input).file.duration_seconds as number | null;
      t.diagnostic(`duration: ${seconds}`);
      if (seconds === null) assert.ok(c.mayBeUnknown, 'the duration is read past the metadata');
      else assert.equal(seconds, c.seconds);
      assert.equal(log.audio_duration, seconds);
    });
  }
});
