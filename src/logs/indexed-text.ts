/**
 * Text that gatelog indexes (model, provider_id, metadata keys and values: in the list indexes, the
 * metadata side table and the facet counts) is bounded in UTF-8 bytes. PostgreSQL refuses a B-tree
 * entry over about 2.7 KB (`index row size exceeds btree maximum`), which once made the writer drop
 * logs SQLite had taken; one rule at the API edge keeps both databases taking the same logs, with
 * every filter exact. Longer values belong in the log's input, output or a JSON field.
 */
import { AppError } from '../errors.js';
import { metadataText } from '../db/metadata-values.js';
import { hasNul } from '../util/nul.js';

export const INDEXED_TEXT_BYTES = {
  model: 512,
  provider_id: 512,
  metadataKey: 256,
  metadataValue: 1024,
} as const;

function tooLong(param: string, what: string, limit: number): AppError {
  return new AppError(
    400,
    'value_too_long',
    `${param}: ${what} is longer than ${limit} bytes (UTF-8); gatelog indexes it. Put longer text in input, output or a JSON field.`,
    param,
  );
}

/** Whether `value` has at most `limit` UTF-8 bytes. */
export const fitsIndex = (value: string, limit: number) =>
  // A UTF-16 code unit is at most 3 UTF-8 bytes: the exact count only when it could matter.
  value.length * 3 <= limit || Buffer.byteLength(value, 'utf8') <= limit;

/**
 * The model a call (or its provider's answer) names, for the log: kept only when it can be stored as it
 * is (no NUL, short enough to index), else the log would be one the database refuses.
 */
export const attemptedModel = (value: unknown): string | undefined =>
  typeof value === 'string' && !hasNul(value) && fitsIndex(value, INDEXED_TEXT_BYTES.model) ? value : undefined;

/** A 400 naming `param` when `value` has more than `limit` UTF-8 bytes. */
export function checkIndexedText(value: string | null | undefined, limit: number, param: string): void {
  if (value && !fitsIndex(value, limit)) {
    throw tooLong(param, 'the value', limit);
  }
}

/** Each metadata key and each value's text form (what filters compare) within the bounds. */
export function checkMetadata(metadata: Record<string, unknown> | null | undefined, param = 'metadata'): void {
  if (!metadata) return;
  for (const [key, value] of Object.entries(metadata)) {
    if (Buffer.byteLength(key, 'utf8') > INDEXED_TEXT_BYTES.metadataKey) {
      throw tooLong(`${param}.${key.slice(0, 40)}`, 'the key', INDEXED_TEXT_BYTES.metadataKey);
    }
    checkIndexedText(metadataText(value), INDEXED_TEXT_BYTES.metadataValue, `${param}.${key}`);
  }
}
