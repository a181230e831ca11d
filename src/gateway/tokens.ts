/**
 * cl100k_base token counting for embedding inputs, in ordinary mode: special-token text such as
 * `<|endoftext|>` counts as plain text, as the provider counts it.
 */
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';

const ORDINARY = { disallowedSpecial: new Set<string>() };

export function countTokens(text: string): number {
  return encode(text, ORDINARY).length;
}

/**
 * Whether `text` has more than `limit` tokens. Every token covers at least one UTF-8 byte, so a text of
 * at most `limit` bytes cannot exceed the limit and is never tokenized.
 */
export function exceedsTokens(text: string, limit: number): { exceeds: boolean; tokens: number | null } {
  if (Buffer.byteLength(text, 'utf8') <= limit) return { exceeds: false, tokens: null };
  const tokens = countTokens(text);
  return { exceeds: tokens > limit, tokens };
}
