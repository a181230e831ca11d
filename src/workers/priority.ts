/**
 * Lowers the CPU priority of the thread that calls it. On Linux a thread has a nice value of its own,
 * and setpriority(2) given a thread id changes that thread alone; /proc/thread-self names the caller's
 * id. Elsewhere (or where the id cannot be read) the thread keeps the process's priority.
 */
import fs from 'node:fs';
import os from 'node:os';

/** Nice value of a background thread: on a busy machine it gets about a tenth of a core the event loop wants. */
export const BACKGROUND_NICE = 10;

/** Returns whether the priority was lowered. */
export function lowerThisThreadPriority(nice = BACKGROUND_NICE): boolean {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').at(-1));
    if (!Number.isInteger(tid) || tid <= 0 || tid === process.pid) return false;
    os.setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
