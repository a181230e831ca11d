/**
 * A metadata value as the metadata side tables hold it (log_metadata, dataset_log_metadata): its text in
 * value_text, and in value_num the number it is, when it is one.
 */

/** A metadata value's text form: strings as they are, anything else as JSON text (1 → "1"). */
export function metadataText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A metadata value as a number, when it is one (a JSON number or a numeric string). */
export function metadataNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) return Number(value);
  return null;
}
