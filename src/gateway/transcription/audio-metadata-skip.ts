/**
 * The audio of an upload without its metadata blocks, where the container says where they are and how
 * long (docs/decisions.md "Audio duration"): the duration needs none of them, and a parser reads each
 * block whole and at once — 100,000 frames of an ID3v2 tag held the event loop for 1.9 s and took 150×
 * their size in heap. Only headers are read here; the result is views into the upload's chunks.
 *
 * MP3: the ID3v2 tags in front of the first frame. FLAC: every block but STREAMINFO, which alone gives
 * the sample rate and the number of samples. WAV: every chunk but `fmt `, `fact` and `data`. Other
 * formats, and files whose headers do not add up, are left as they are: the parse that follows is
 * bounded in time and memory whatever it is given (audio-duration.ts).
 */
import type { AudioFormat } from './audio-format.js';
import { ChunkView } from './chunk-view.js';

/** The most headers walked: real files have a few; a file of empty blocks would only cost time here. */
const MAX_BLOCKS = 1024;

const MPEG_FORMATS: readonly AudioFormat[] = ['mp3', 'mpga', 'mpeg'];

/** The file to read the duration from: the upload's chunks, or views into them without the metadata. */
export function withoutMetadata(chunks: readonly Buffer[], bytes: number, format: AudioFormat): readonly Buffer[] {
  const file = new ChunkView(chunks, bytes);
  if (MPEG_FORMATS.includes(format)) return withoutId3v2(file) ?? chunks;
  if (format === 'flac') return flacStreamInfoOnly(file) ?? chunks;
  if (format === 'wav') return wavWithoutExtraChunks(file) ?? chunks;
  return chunks;
}

const isText = (bytes: Buffer | null, text: string): bytes is Buffer =>
  bytes !== null && bytes.toString('latin1', 0, text.length) === text;

/** The file from its first byte past the ID3v2 tags it starts with (several may follow each other). */
function withoutId3v2(file: ChunkView): Buffer[] | null {
  let at = 0;
  for (let tags = 0; tags < MAX_BLOCKS; tags++) {
    const header = file.bytes(at, 10);
    if (!isText(header, 'ID3')) break;
    // The size is a syncsafe integer: 7 bits a byte, the high bit always clear.
    if ((header[6] | header[7] | header[8] | header[9]) & 0x80) return null;
    const size = (header[6] << 21) | (header[7] << 14) | (header[8] << 7) | header[9];
    const footer = header[3] === 4 && header[5] & 0x10 ? 10 : 0;
    at += 10 + size + footer;
  }
  return at === 0 || at >= file.size ? null : file.range(at);
}

/** "fLaC", STREAMINFO marked as the last block, and the frames after the last metadata block. */
function flacStreamInfoOnly(file: ChunkView): Buffer[] | null {
  const first = file.bytes(4, 4);
  if (!isText(file.bytes(0, 4), 'fLaC') || first === null) return null;
  // Block header: last-block flag and 7-bit type, then a 24-bit length. STREAMINFO is first, 34 bytes.
  if ((first[0] & 0x7f) !== 0 || first.readUIntBE(1, 3) !== 34) return null;
  let at = 4;
  for (let blocks = 0; blocks < MAX_BLOCKS; blocks++) {
    const header = file.bytes(at, 4);
    if (header === null) return null;
    at += 4 + header.readUIntBE(1, 3);
    if (header[0] & 0x80) {
      if (at === 4 + 4 + 34) return null; // STREAMINFO alone already
      const streamInfo = Buffer.from(file.bytes(4, 4 + 34)!);
      streamInfo[0] |= 0x80;
      return [Buffer.from('fLaC', 'latin1'), streamInfo, ...file.range(at)];
    }
  }
  return null;
}

/** Chunks a WAV file's duration is read from: the format, the sample count of compressed ones, the samples. */
const WAV_AUDIO_CHUNKS = new Set(['fmt ', 'fact', 'data']);

/** The RIFF header, then the `fmt `, `fact` and `data` chunks in their order; the RIFF size made to fit. */
function wavWithoutExtraChunks(file: ChunkView): Buffer[] | null {
  const riff = file.bytes(0, 12);
  if (!isText(riff, 'RIFF') || riff.toString('latin1', 8, 12) !== 'WAVE') return null;
  const kept: Buffer[] = [];
  let dropped = false;
  let at = 12;
  for (let chunks = 0; at < file.size; chunks++) {
    const header = file.bytes(at, 8);
    if (header === null || chunks === MAX_BLOCKS) return null;
    const id = header.toString('latin1', 0, 4);
    // Chunks are padded to an even length; a data chunk whose size passes the end (a stream's) ends the file.
    const end = at + 8 + header.readUInt32LE(4) + (header.readUInt32LE(4) & 1);
    if (WAV_AUDIO_CHUNKS.has(id)) kept.push(...file.range(at, end));
    else dropped = true;
    at = end;
  }
  if (!dropped) return null;
  const head = Buffer.from(riff);
  head.writeUInt32LE(
    kept.reduce((sum, piece) => sum + piece.length, 4),
    4,
  );
  return [head, ...kept];
}
