/**
 * How many seconds of audio a file holds, read from the file by music-metadata (docs/api.md
 * "Speech-to-text proxy"): what a transcription costs when the provider does not say.
 */
import { Readable } from 'node:stream';
import { parseStream } from 'music-metadata';
import { type AudioFormat, AUDIO_MIME_TYPES } from './audio-format.js';

/** The parser's own name for a format where it differs from the content type sent upstream. */
const PARSER_TYPES: Partial<Record<AudioFormat, string>> = { m4a: 'audio/mp4', mp4: 'audio/mp4' };

/** Seconds of audio, or null when the file cannot be read as `format`. */
export async function audioDuration(
  chunks: readonly Buffer[],
  bytes: number,
  format: AudioFormat,
): Promise<number | null> {
  try {
    const metadata = await parseStream(
      Readable.from(chunks, { objectMode: false }),
      { mimeType: PARSER_TYPES[format] ?? AUDIO_MIME_TYPES[format], size: bytes },
      { duration: true, skipCovers: true },
    );
    const seconds = metadata.format.duration;
    return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
  } catch {
    return null;
  }
}
