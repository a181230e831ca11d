/**
 * CSV lines (RFC 4180): a field holding a comma, a quote or a line break is quoted, quotes doubled;
 * objects and arrays are written as JSON text, null as an empty field. A text a spreadsheet would run
 * as a formula (starting with =, +, -, @, a tab or a carriage return) is written after a single quote:
 * an exported log must not become code on the reader's machine. Spreadsheets also read the full-width
 * forms (＝＋－＠, which some convert to ASCII on entry) and skip whitespace before a formula, so those
 * count too.
 */
const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^(?:[\t\r]|\s*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/;

export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'string') text = FORMULA_START.test(value) ? `'${value}` : value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else text = JSON.stringify(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvLine = (values: readonly unknown[]): string => `${values.map(csvField).join(',')}\r\n`;
