/**
 * UUID version 7 (RFC 9562): a 48-bit Unix-millisecond timestamp, then random bits. Logs get these as
 * unique_id so that each insert lands at the end of the unique_id index: a random (version 4) id puts
 * every insert on a random index page, which costs the log-writing thread about a third more per log
 * and grows with the table (bench/README.md).
 */
import crypto from 'node:crypto';

export function uuidv7(now: number = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  // randomUUID() is a fast source of random hex in UUID layout: keep its random parts and its
  // variant, put the time in front and set the version digit.
  const random = crypto.randomUUID();
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19)}`;
}
