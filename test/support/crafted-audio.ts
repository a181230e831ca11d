/**
 * Audio files with hostile metadata, built from the real fixtures (audio.ts): the audio stays the
 * fixture's, so its duration is known, and the metadata around it is as large and as fragmented as a
 * client may make it. Each builder keeps the container valid (sizes, and the CRC of every Ogg page).
 */
import fs from 'node:fs';
import { audioPath } from './audio.js';

const fixture = (file: string) => fs.readFileSync(audioPath(file));

const u32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

/** A 28-bit integer as ID3v2 writes sizes: 7 bits a byte. */
function syncsafe(n: number): Buffer {
  return Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
}

/** An ID3v2.3 tag of `frames` TXXX frames of four bytes each; with `footer`, an ID3v2.4 tag with its footer. */
export function id3v2Tag(frames: number, options: { footer?: boolean } = {}): Buffer {
  const frame = Buffer.concat([Buffer.from('TXXX'), u32be(4), Buffer.alloc(2), Buffer.from([0, 0x61, 0, 0x62])]);
  const body = Buffer.alloc(frame.length * frames);
  for (let i = 0; i < frames; i++) frame.copy(body, i * frame.length);
  const version = options.footer ? 4 : 3;
  const flags = options.footer ? 0x10 : 0;
  const header = (id: string) =>
    Buffer.concat([Buffer.from(id), Buffer.from([version, 0, flags]), syncsafe(body.length)]);
  return Buffer.concat([header('ID3'), body, ...(options.footer ? [header('3DI')] : [])]);
}

/** An MP3 fixture behind an ID3v2 tag of `frames` tiny frames (about 1.4 MB for 100,000). */
export function mp3WithTag(frames: number, file = 'hello.mp3'): Buffer {
  return Buffer.concat([id3v2Tag(frames), fixture(file)]);
}

/** A FLAC metadata block header: last-block flag, type, 24-bit length. */
const flacBlockHeader = (type: number, length: number, last: boolean) =>
  Buffer.from([(last ? 0x80 : 0) | type, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff]);

/** A Vorbis comment packet body: vendor and `count` comments "a=b" (7 bytes each). */
function vorbisComments(count: number): Buffer {
  const vendor = Buffer.from('crafted');
  const body = Buffer.alloc(4 + vendor.length + 4 + count * 7);
  body.writeUInt32LE(vendor.length, 0);
  vendor.copy(body, 4);
  let at = 4 + vendor.length;
  body.writeUInt32LE(count, at);
  at += 4;
  for (let i = 0; i < count; i++, at += 7) {
    body.writeUInt32LE(3, at);
    body.write('a=b', at + 4, 'latin1');
  }
  return body;
}

/**
 * The FLAC fixture with a VORBIS_COMMENT block of `comments` comments (3.5 MB for 500,000) right after
 * STREAMINFO, before the fixture's own blocks.
 */
export function flacWithComments(comments: number): Buffer {
  const file = fixture('hello.flac');
  const streaminfoEnd = 4 + 4 + 34;
  const body = vorbisComments(comments);
  if (body.length >= 1 << 24) throw new Error('a FLAC metadata block holds less than 16 MB');
  return Buffer.concat([
    file.subarray(0, streaminfoEnd),
    flacBlockHeader(4, body.length, false),
    body,
    file.subarray(streaminfoEnd),
  ]);
}

/** The WAV fixture with a LIST/INFO chunk of `entries` INAM entries of 10 bytes each, before its data. */
export function wavWithList(entries: number): Buffer {
  const file = fixture('hello.wav');
  const entry = Buffer.concat([Buffer.from('INAM'), u32le(2), Buffer.from('a\0')]);
  const info = Buffer.alloc(4 + entries * entry.length);
  info.write('INFO', 0, 'latin1');
  for (let i = 0; i < entries; i++) entry.copy(info, 4 + i * entry.length);
  const list = Buffer.concat([Buffer.from('LIST'), u32le(info.length), info]);
  const fmtEnd = 12 + 8 + file.readUInt32LE(16);
  const wav = Buffer.concat([file.subarray(0, fmtEnd), list, file.subarray(fmtEnd)]);
  wav.writeUInt32LE(wav.length - 8, 4);
  return wav;
}

/** An ISO BMFF box. */
const box = (type: string, ...content: Buffer[]) => {
  const body = Buffer.concat(content);
  return Buffer.concat([u32be(8 + body.length), Buffer.from(type, 'latin1'), body]);
};

/**
 * The M4A fixture with a second udta/meta/ilst at the end of its moov, of `items` tiny ©nam items (25
 * bytes each). Its moov is the file's last box, so no chunk offset moves.
 */
export function m4aWithItems(items: number): Buffer {
  const file = fixture('hello.m4a');
  const moovAt = file.indexOf('moov', 0, 'latin1') - 4;
  if (moovAt + file.readUInt32BE(moovAt) !== file.length) throw new Error('moov is not the last box');
  const item = box('\u00a9nam', box('data', u32be(1), u32be(0), Buffer.from('a')));
  const ilst = Buffer.alloc(items * item.length);
  for (let i = 0; i < items; i++) item.copy(ilst, i * item.length);
  const hdlr = box('hdlr', Buffer.alloc(8), Buffer.from('mdirappl'), Buffer.alloc(9));
  const udta = box('udta', box('meta', Buffer.alloc(4), hdlr, box('ilst', ilst)));
  return Buffer.concat([file.subarray(0, moovAt), box('moov', file.subarray(moovAt + 8), udta)]);
}

/** CRC-32 as Ogg computes it: polynomial 0x04c11db7, not reflected, starting from 0. */
const OGG_CRC = Array.from({ length: 256 }, (_, i) => {
  let r = i << 24;
  for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});
function oggCrc(page: Buffer): number {
  let crc = 0;
  for (const byte of page) crc = ((crc << 8) ^ OGG_CRC[((crc >>> 24) ^ byte) & 0xff]) >>> 0;
  return crc;
}

interface OggPage {
  header: Buffer;
  packetData: Buffer;
  segments: number[];
}

function oggPages(file: Buffer): OggPage[] {
  const pages: OggPage[] = [];
  for (let at = 0; at < file.length;) {
    const count = file[at + 26];
    const segments = [...file.subarray(at + 27, at + 27 + count)];
    const length = segments.reduce((a, b) => a + b, 0);
    pages.push({
      header: Buffer.from(file.subarray(at, at + 27)),
      segments,
      packetData: file.subarray(at + 27 + count, at + 27 + count + length),
    });
    at += 27 + count + length;
  }
  return pages;
}

/** A page's bytes, numbered `sequence`, its CRC computed. */
function writePage(page: OggPage, sequence: number): Buffer {
  const header = Buffer.from(page.header);
  header[26] = page.segments.length;
  header.writeUInt32LE(sequence, 18);
  header.writeUInt32LE(0, 22);
  const bytes = Buffer.concat([header, Buffer.from(page.segments), page.packetData]);
  bytes.writeUInt32LE(oggCrc(bytes), 22);
  return bytes;
}

/**
 * The Ogg Opus fixture with an OpusTags packet of `comments` comments (7 bytes each) in place of its own,
 * spread over as many pages as it takes (255 segments of 255 bytes a page, continued), the pages after
 * it renumbered.
 */
export function opusWithComments(comments: number): Buffer {
  const pages = oggPages(fixture('hello-opus.ogg'));
  if (pages[1].packetData.toString('latin1', 0, 8) !== 'OpusTags') throw new Error('no OpusTags on page 2');
  const packet = Buffer.concat([Buffer.from('OpusTags'), vorbisComments(comments)]);
  const tagPages: OggPage[] = [];
  const perPage = 255 * 255;
  for (let at = 0; at <= packet.length; at += perPage) {
    const data = packet.subarray(at, at + perPage);
    const segments = Array<number>(Math.floor(data.length / 255)).fill(255);
    // A packet ends with a segment shorter than 255 bytes (0 when its length is a multiple of 255).
    if (data.length < perPage) segments.push(data.length % 255);
    const header = Buffer.from(pages[1].header);
    header[5] = at === 0 ? 0 : 0x01; // continued packet
    header.writeBigInt64LE(at + perPage > packet.length ? 0n : -1n, 6); // granule: none until the packet ends
    tagPages.push({ header, segments, packetData: data });
  }
  const all = [pages[0], ...tagPages, ...pages.slice(2)];
  return Buffer.concat(all.map((page, i) => writePage(page, i)));
}
