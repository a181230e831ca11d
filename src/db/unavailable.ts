/**
 * Errors that say the database cannot be used for now — its server unreachable or restarting, its disk
 * full, its file unreadable — as opposed to a statement it refused. A request that meets one gets a 503
 * with Retry-After, not a 500: nothing was changed, and the same call succeeds once the database is back.
 */

export type UnavailableReason = 'disk_full' | 'unreachable';

/** SQLite result codes that mean the file cannot be written or read for now (busy and locked included). */
const SQLITE_OUTAGE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|NOMEM|PROTOCOL)/;

export function isSqliteOutageCode(code: unknown): boolean {
  return SQLITE_OUTAGE.test(String(code ?? ''));
}

/** Socket errors of the driver itself, before or instead of any answer from the server. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);

export function unavailableReason(err: unknown): UnavailableReason | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = String(e?.code ?? '');
  const message = String(e?.message ?? '');
  // SQLite's "database or disk is full"; PostgreSQL's disk_full (53100).
  if (code.startsWith('SQLITE_FULL') || code === '53100') return 'disk_full';
  if (code.startsWith('SQLITE_') && !code.startsWith('SQLITE_BUSY') && !code.startsWith('SQLITE_LOCKED')) {
    return isSqliteOutageCode(code) ? 'unreachable' : null;
  }
  // Class 08: connection exceptions; 57P0x: the server shutting down or starting; 53xxx: out of resources.
  if (code.startsWith('08') || /^57P0[1-3]$/.test(code) || code.startsWith('53')) return 'unreachable';
  // A database whose connections are switched off (ALTER DATABASE … ALLOW_CONNECTIONS false).
  if (code === '55000' && message.includes('not currently accepting connections')) return 'unreachable';
  // A read replica's replay cancelled the read (it removed rows the read still saw): it may pass if tried
  // again; hot_standby_feedback prevents it (docs/scaling.md "Read replicas").
  if (code.startsWith('40') && message.includes('conflict with recovery')) return 'unreachable';
  if (NETWORK_CODES.has(code)) return 'unreachable';
  // node-postgres reports a connection closed under a query or a connect timeout without a code.
  if (code === '' && /^Connection terminated/.test(message)) return 'unreachable';
  return null;
}
