/**
 * The audio fixtures (test/fixtures/audio, README.md there): real speech, "hello world", in every accepted
 * format, with the duration ffprobe reports for each.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const AUDIO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/audio');

export interface AudioFixture {
  file: string;
  format: string;
  /** Seconds, from the fixtures' README. */
  seconds: number;
}

export const AUDIO_FIXTURES: readonly AudioFixture[] = [
  { file: 'hello.flac', format: 'flac', seconds: 1.259875 },
  { file: 'hello.mp3', format: 'mp3', seconds: 1.332 },
  { file: 'hello.mpga', format: 'mpga', seconds: 1.332 },
  { file: 'hello.mp4', format: 'mp4', seconds: 1.26 },
  { file: 'hello.m4a', format: 'm4a', seconds: 1.26 },
  // ffprobe says 1.08 for the program stream: it counts from the first packet's time stamp (0.5 s) to
  // the last packet's, leaving out that packet's own length; the audio decodes to 1.26 s, which the
  // README gives as well and which is what the provider transcribes.
  { file: 'hello.mpeg', format: 'mpeg', seconds: 1.26 },
  { file: 'hello.ogg', format: 'ogg', seconds: 1.259875 },
  { file: 'hello-opus.ogg', format: 'ogg', seconds: 1.266375 },
  { file: 'hello.wav', format: 'wav', seconds: 1.259875 },
  { file: 'hello.webm', format: 'webm', seconds: 1.267 },
];

export const audioPath = (file: string) => path.join(AUDIO_DIR, file);
