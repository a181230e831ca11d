/** Which database errors are an outage (a 503 to retry) rather than a statement refused (db/unavailable.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { unavailableReason } from '../../src/db/unavailable.js';

const error = (code: string | undefined, message = 'x') => Object.assign(new Error(message), { code });

describe('a database error', () => {
  it('is a full disk, an unreachable database, or neither', () => {
    const cases: [unknown, ReturnType<typeof unavailableReason>][] = [
      [error('SQLITE_FULL', 'database or disk is full'), 'disk_full'],
      [error('53100', 'could not extend file: No space left on device'), 'disk_full'],
      [error('SQLITE_CANTOPEN', 'unable to open database file'), 'unreachable'],
      [error('SQLITE_IOERR_WRITE'), 'unreachable'],
      [error('SQLITE_READONLY'), 'unreachable'],
      [error('ECONNREFUSED'), 'unreachable'],
      [error('57P01', 'terminating connection due to administrator command'), 'unreachable'],
      [error('57P03', 'the database system is starting up'), 'unreachable'],
      [error('08006'), 'unreachable'],
      [error('53300', 'too many connections'), 'unreachable'],
      [error('55000', 'database "x" is not currently accepting connections'), 'unreachable'],
      [error(undefined, 'Connection terminated unexpectedly'), 'unreachable'],
      [error('40001', 'canceling statement due to conflict with recovery'), 'unreachable'],
      // Statements refused, or busy (a 503 of its own): not an outage.
      [error('SQLITE_CONSTRAINT_UNIQUE'), null],
      [error('SQLITE_BUSY'), null],
      [error('SQLITE_ERROR', 'no such column'), null],
      [error('23505', 'duplicate key'), null],
      [error('40001', 'could not serialize access due to concurrent update'), null],
      [error('55000', 'some other prerequisite'), null],
      [error('42601', 'syntax error'), null],
      [new Error('Connection was fine, the code was not'), null],
      [null, null],
    ];
    for (const [err, want] of cases) assert.equal(unavailableReason(err), want, String((err as Error)?.message));
  });
});
