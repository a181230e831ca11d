/**
 * cl100k_base token counting for embedding inputs, in ordinary mode: special-token text such as
 * `<|endoftext|>` counts as plain text, as the provider counts it. The tokenizer's tables take ~40 MB,
 * so they are loaded on first use: most requests never need them (see exceedsTokens).
 */
type Encode = (text: string, options: { disallowedSpecial: Set<string> }) => number[];

let encoder: Promise<Encode> | null = null;
const ORDINARY = { disallowedSpecial: new Set<string>() };

async function load(): Promise<Encode> {
  encoder ??= import('gpt-tokenizer/encoding/cl100k_base').then((m) => m.encode as Encode);
  return encoder;
}

export async function countTokens(text: string): Promise<number> {
  return (await load())(text, ORDINARY).length;
}

/**
 * Whether `text` has more than `limit` tokens. Every token covers at least one UTF-8 byte, so a text of
 * at most `limit` bytes cannot exceed the limit and is never tokenized.
 */
export async function exceedsTokens(text: string, limit: number): Promise<{ exceeds: boolean; tokens: number | null }> {
  if (Buffer.byteLength(text, 'utf8') <= limit) return { exceeds: false, tokens: null };
  const tokens = await countTokens(text);
  return { exceeds: tokens > limit, tokens };
}
