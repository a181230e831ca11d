/**
 * What a gatelog process a bench starts allocates, every sampled allocation counted — also the objects a
 * young-generation collection freed at once, which `node --heap-prof` leaves out (it keeps only what is
 * still alive when its profile is written): a call's garbage is what its collections cost. Preloaded
 * (`--require`, see benchNodeArgs) when GATELOG_BENCH_HEAP_PROF names a directory; main thread only;
 * the profile is written there when the process exits (allocations-PID.heapprofile, read by
 * heap-profile-summary.mjs). Never part of gatelog itself.
 */
import fs from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.GATELOG_BENCH_HEAP_PROF;
if (dir && isMainThread) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 16 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // The in-thread inspector session answers synchronously, so the profile is written before the exit.
  process.on('exit', () => {
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err === null) {
        fs.writeFileSync(path.join(dir, `allocations-${process.pid}.heapprofile`), JSON.stringify(result.profile));
      }
    });
  });
}
