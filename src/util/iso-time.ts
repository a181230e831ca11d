/**
 * The one ISO 8601 parser of the service: log timestamps, list ranges and filters all read times here,
 * so a time means the same everywhere. A date-time without an offset is UTC (JavaScript's Date.parse
 * would read it as the server's local time); a date alone is midnight UTC.
 */

const HAS_TIME = /T\d\d:\d\d/;
const HAS_OFFSET = /(Z|[+-]\d\d:?\d\d)$/i;

/** Epoch milliseconds, or null when the text is not an ISO 8601 date or date-time. */
export function parseIsoTime(raw: string): number | null {
  const value = raw.trim();
  if (!/^\d{4}-\d\d-\d\d/.test(value)) return null;
  const withZone = HAS_TIME.test(value) && !HAS_OFFSET.test(value) ? `${value}Z` : value;
  const ms = Date.parse(withZone);
  return Number.isNaN(ms) ? null : ms;
}
