/**
 * The thread audio durations are read on (audio-duration.ts): music-metadata parses some metadata
 * blocks whole and at once, which here holds only this thread, and only until its job's deadline.
 */
import { parseBuffer } from 'music-metadata';
import { lowerThisThreadPriority } from '../../workers/priority.js';
import { serveJobs } from '../../workers/serve.js';

export interface DurationJob {
  /** The file (its metadata blocks already left out where they could be), shared, not copied again. */
  file: SharedArrayBuffer;
  mimeType: string;
}

// A hostile file may keep this thread busy until its deadline: the event loop comes first.
lowerThisThreadPriority();

serveJobs<DurationJob, number | null>(async ({ file, mimeType }) => {
  const bytes = new Uint8Array(file);
  const metadata = await parseBuffer(bytes, { mimeType, size: bytes.length }, { duration: true, skipCovers: true });
  const seconds = metadata.format.duration;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
});
