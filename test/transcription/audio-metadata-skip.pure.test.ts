import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { AudioDurations } from '../../src/gateway/transcription/audio-duration.js';
import type { AudioFormat } from '../../src/gateway/transcription/audio-format.js';
import { withoutMetadata } from '../../src/gateway/transcription/audio-metadata-skip.js';
import { ChunkView } from '../../src/gateway/transcription/chunk-view.js';
import { AUDIO_FIXTURES, audioPath } from '../support/audio.js';
import { flacWithComments, id3v2Tag, wavWithList } from '../support/crafted-audio.js';

/** A file as an upload holds it: in chunks of `size` bytes. */
const inChunks = (file: Buffer, size = 997) =>
  Array.from({ length: Math.ceil(file.length / size) }, (_, i) => file.subarray(i * size, (i + 1) * size));

const joined = (pieces: readonly Buffer[]) => Buffer.concat(pieces);

describe('audio durations past the metadata blocks', () => {
  const durations = new AudioDurations();
  after(() => durations.close());
  const read = (file: Buffer, format: AudioFormat) => durations.read(inChunks(file), file.length, format);
  const fixture = (file: string) => fs.readFileSync(audioPath(file));

  it('reads every fixture as before: the duration ffprobe gives, within 0.15 s', async () => {
    for (const f of AUDIO_FIXTURES) {
      const seconds = await read(fixture(f.file), f.format as AudioFormat);
      assert.ok(seconds !== null && Math.abs(seconds - f.seconds) <= 0.15, `${f.file}: ${seconds}`);
    }
  });

  it('reads an MP3 behind large ID3v2 tags (one, several in a row, v2.4 with its footer) as without them', async () => {
    for (const file of ['hello.mp3', 'hello.mpga']) {
      const plain = fixture(file);
      const expected = await read(plain, 'mp3');
      assert.equal(expected, 1.332, file);
      for (const tags of [[id3v2Tag(100_000)], [id3v2Tag(10), id3v2Tag(50_000, { footer: true }), id3v2Tag(3)]]) {
        const tagged = Buffer.concat([...tags, plain]);
        assert.deepEqual(joined(withoutMetadata(inChunks(tagged), tagged.length, 'mp3')), plain, file);
        assert.equal(await read(tagged, 'mp3'), expected, file);
        assert.equal(await read(tagged, 'mpga'), expected, file);
      }
    }
  });

  it('reads a FLAC with a VORBIS_COMMENT of 500,000 comments from STREAMINFO, its frames kept', async () => {
    const plain = fixture('hello.flac');
    const tagged = flacWithComments(500_000);
    const kept = joined(withoutMetadata(inChunks(tagged), tagged.length, 'flac'));
    assert.equal(kept.toString('latin1', 0, 4), 'fLaC');
    assert.equal(kept[4], 0x80, 'STREAMINFO, now the last block');
    assert.deepEqual(kept.subarray(5, 42), plain.subarray(5, 42));
    const frames = plain.indexOf(Buffer.from([0xff, 0xf8]), 42);
    assert.deepEqual(kept.subarray(42), plain.subarray(frames), 'every frame, from the first');
    assert.equal(await read(tagged, 'flac'), await read(plain, 'flac'));
    assert.equal(await read(tagged, 'flac'), 1.259875);
  });

  it('reads a WAV with a 3.8 MB LIST chunk, before or after its samples, as without it', async () => {
    const plain = fixture('hello.wav');
    const before = wavWithList(380_000);
    assert.deepEqual(joined(withoutMetadata(inChunks(before), before.length, 'wav')), plain);
    assert.equal(await read(before, 'wav'), 1.259875);
    // The same LIST chunk after the data chunk, the RIFF size counting it.
    const list = before.subarray(36, before.length - (plain.length - 36));
    const afterData = Buffer.concat([plain, list]);
    afterData.writeUInt32LE(afterData.length - 8, 4);
    assert.deepEqual(joined(withoutMetadata(inChunks(afterData), afterData.length, 'wav')), plain);
    assert.equal(await read(afterData, 'wav'), 1.259875);
  });

  it('leaves a file whose headers do not add up as it is', () => {
    const mp3 = fixture('hello.mp3');
    const pastTheEnd = Buffer.concat([id3v2Tag(1).subarray(0, 10), mp3]);
    pastTheEnd[9] = 0x7f; // the tag says it holds more than the file
    pastTheEnd[8] = 0x7f;
    const chunks = inChunks(pastTheEnd);
    assert.equal(withoutMetadata(chunks, pastTheEnd.length, 'mp3'), chunks);
    const notSyncsafe = Buffer.concat([id3v2Tag(1), mp3]);
    notSyncsafe[9] |= 0x80;
    assert.equal(withoutMetadata([notSyncsafe], notSyncsafe.length, 'mp3').length, 1);
    const flac = fixture('hello.flac');
    const cut = flac.subarray(0, 60); // its metadata blocks run past the end
    assert.deepEqual(withoutMetadata([cut], cut.length, 'flac'), [cut]);
    const wav = fixture('hello.wav');
    assert.deepEqual(withoutMetadata([wav], wav.length, 'wav'), [wav], 'nothing to leave out');
  });
});

describe('ChunkView', () => {
  const file = Buffer.from('0123456789abcdefghij');
  const view = new ChunkView(inChunks(file, 3), file.length);

  it('reads bytes at any offset, across chunks, and nothing past the end', () => {
    for (let at = 0; at < file.length; at++) {
      for (let n = 0; at + n <= file.length; n++) assert.deepEqual(view.bytes(at, n), file.subarray(at, at + n));
      assert.equal(view.bytes(at, file.length - at + 1), null);
    }
  });

  it('gives a range as views into the chunks', () => {
    assert.equal(joined(view.range(4, 13)).toString(), '456789abc');
    assert.equal(joined(view.range(17)).toString(), 'hij');
    assert.equal(joined(view.range(5, 99)).toString(), '56789abcdefghij');
    assert.ok(
      view.range(3, 6).every((piece) => piece.buffer === file.buffer),
      'not copied',
    );
  });
});
