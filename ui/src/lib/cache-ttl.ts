/**
 * The response cache's TTL as a person reads and types it: a number and a unit (days, hours, minutes,
 * seconds), sent to the API as whole seconds, from 1 s to a year. Pure.
 */

export const TTL_UNITS = [
  { unit: 'days', seconds: 86_400 },
  { unit: 'hours', seconds: 3_600 },
  { unit: 'minutes', seconds: 60 },
  { unit: 'seconds', seconds: 1 },
] as const;

export type TtlUnit = (typeof TTL_UNITS)[number]['unit'];

/** The longest TTL the API takes: a year (365 days). */
export const MAX_TTL_S = 365 * 86_400;

const unitSeconds = (unit: TtlUnit): number => TTL_UNITS.find((u) => u.unit === unit)!.seconds;

/** A TTL in the largest unit it is a whole number of: 2592000 → 30 days, 5400 → 90 minutes. */
export function ttlParts(seconds: number): { amount: number; unit: TtlUnit } {
  const fit = TTL_UNITS.find((u) => seconds >= u.seconds && seconds % u.seconds === 0) ?? TTL_UNITS[3];
  return { amount: seconds / fit.seconds, unit: fit.unit };
}

/**
 * The seconds an amount of a unit is, or why it cannot be sent: the text names what the API would
 * refuse (not a whole number of seconds, under 1 s, over a year) in words a person can act on.
 */
export function ttlSeconds(amount: string, unit: TtlUnit): { seconds: number } | { problem: string } {
  const text = amount.trim();
  const n = Number(text);
  if (text === '' || !Number.isFinite(n)) return { problem: 'Give a number.' };
  // Rounded to the millisecond first: 1.1 hours is 3960 s, not 3960.0000000000005.
  const seconds = Math.round(n * unitSeconds(unit) * 1000) / 1000;
  if (!Number.isInteger(seconds)) return { problem: `${text} ${unit} is not a whole number of seconds.` };
  if (seconds < 1) return { problem: 'At least 1 second.' };
  if (seconds > MAX_TTL_S) return { problem: 'At most a year (365 days).' };
  return { seconds };
}

/** "30 days", "1 hour", "90 seconds". */
export function ttlText(seconds: number): string {
  const { amount, unit } = ttlParts(seconds);
  return `${amount} ${amount === 1 ? unit.slice(0, -1) : unit}`;
}
