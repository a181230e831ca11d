/**
 * A retention setting as typed in the settings form: whole days, or blank for the server's setting
 * (null in the API). What the API accepts (docs/api.md "Retention"): 0 to MAX_RETENTION_DAYS.
 */

/** A hundred years, as the API allows. */
export const MAX_RETENTION_DAYS = 36_500;

/** The text a setting is shown as: blank when it takes the server's. */
export const retentionText = (days: number | null) => (days === null ? '' : String(days));

/** The days a typed text names (null: blank, the server's setting), or what is wrong with it. */
export function retentionDays(text: string): { days: number | null } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { days: null };
  const days = Number(trimmed);
  if (!Number.isFinite(days) || !/^\d+(\.\d*)?$/.test(trimmed)) {
    return { problem: 'Give a whole number of days, or leave it blank for the server’s setting.' };
  }
  if (!Number.isInteger(days)) return { problem: 'Give a whole number of days.' };
  if (days > MAX_RETENTION_DAYS) return { problem: `At most ${MAX_RETENTION_DAYS} days (a hundred years).` };
  return { days };
}
