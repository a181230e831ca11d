/**
 * Which of the accepted audio formats a file is (docs/api.md "Speech-to-text proxy"): read from its first
 * bytes, and only when they say nothing, from its name's extension. Nine names, five containers: mp3,
 * mpga and mpeg name MPEG audio frames (mpeg also the MPEG program stream that carries them), mp4 and
 * m4a the ISO media file.
 */
export const AUDIO_FORMATS = ['flac', 'mp3', 'mp4', 'mpeg', 'mpga', 'm4a', 'ogg', 'wav', 'webm'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

/** The content type a file of each format is sent with when its client gave a generic one. */
export const AUDIO_MIME_TYPES: Record<AudioFormat, string> = {
  flac: 'audio/flac',
  mp3: 'audio/mpeg',
  mpga: 'audio/mpeg',
  mpeg: 'audio/mpeg',
  mp4: 'audio/mp4',
  m4a: 'audio/mp4',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  webm: 'audio/webm',
};

/** Formats that name the same kind of bytes: the extension picks among them. */
const SAME_BYTES: Partial<Record<AudioFormat, readonly AudioFormat[]>> = {
  mp3: ['mp3', 'mpga', 'mpeg'],
  mp4: ['mp4', 'm4a'],
};

export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? '' : filename.slice(dot + 1).toLowerCase();
}

const isFormat = (ext: string): ext is AudioFormat => (AUDIO_FORMATS as readonly string[]).includes(ext);

const ascii = (head: Buffer, at: number, text: string) =>
  head.length >= at + text.length && head.toString('latin1', at, at + text.length) === text;

/** The container the bytes start with, or null when they start like none of the accepted ones. */
export function sniffAudio(head: Buffer): AudioFormat | null {
  if (ascii(head, 0, 'fLaC')) return 'flac';
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WAVE')) return 'wav';
  if (ascii(head, 0, 'OggS')) return 'ogg';
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) {
    // EBML: WebM says so in its DocType, near the start; other Matroska files are not accepted.
    return head.subarray(0, 64).includes('webm', 0, 'latin1') ? 'webm' : null;
  }
  if (ascii(head, 4, 'ftyp')) {
    const brand = head.toString('latin1', 8, 12);
    if (brand === 'qt  ') return null; // QuickTime, not MPEG-4
    return brand.startsWith('M4A') || brand.startsWith('M4B') ? 'm4a' : 'mp4';
  }
  if (head.length >= 4 && head.readUInt32BE(0) === 0x000001ba) return 'mpeg'; // MPEG program stream
  if (ascii(head, 0, 'ID3')) return 'mp3';
  // An MPEG audio frame header: 11 sync bits, a version that is not reserved, layer I, II or III
  // (layer bits 00 is AAC's ADTS, not accepted).
  if (head.length >= 2 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0) {
    const version = (head[1] >> 3) & 0x03;
    const layer = (head[1] >> 1) & 0x03;
    if (version !== 0x01 && layer !== 0x00) return 'mp3';
  }
  return null;
}

export interface DetectedFormat {
  format: AudioFormat;
  /** true when the bytes said which it is; false when only the name did. */
  sniffed: boolean;
}

/** The file's format, or null when neither its bytes nor its name make it one of the accepted ones. */
export function detectAudioFormat(head: Buffer, filename: string): DetectedFormat | null {
  const ext = extensionOf(filename);
  const sniffed = sniffAudio(head);
  if (sniffed === null) return isFormat(ext) ? { format: ext, sniffed: false } : null;
  // MPEG program stream bytes are 'mpeg' whatever their name; MPEG audio frames take the name's spelling.
  const family = sniffed === 'mpeg' ? ['mpeg'] : (SAME_BYTES[sniffed] ?? [sniffed]);
  return { format: isFormat(ext) && family.includes(ext) ? ext : sniffed, sniffed: true };
}

/**
 * The name the file is sent upstream with: the client's, unless its extension does not name the format
 * the bytes are (the provider reads the format from the name), then with the format's extension added.
 */
export function upstreamFilename(filename: string, format: AudioFormat): string {
  if (extensionOf(filename) === format) return filename;
  return `${filename === '' ? 'audio' : filename}.${format}`;
}
