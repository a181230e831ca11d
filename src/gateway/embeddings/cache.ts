/**
 * The response cache for embeddings, item by item (docs/api.md "Response cache"): each input's vector
 * is kept on its own (provider, model, dimensions, the input), so a call whose inputs are partly known
 * sends only the others upstream and answers every input in order. Vectors are kept as base64 of
 * little-endian float32, the provider's own encoding, and given back in the encoding the call asked for.
 */
import { cacheKey } from '../../cache/response-cache.js';
import type { EmbeddingsRequest } from './request.js';

/** What the cache knew of a call's inputs when it was looked up. */
export interface ItemLookup {
  /** The provider and model the inputs were looked up for: only their answer fills the gaps. */
  provider: string;
  model: string;
  /** Each input's key, by input index. */
  keys: string[];
  /** Stored vectors (base64 float32), by input index. */
  found: Map<number, string>;
  /** Input indexes not found, in order: what goes upstream. */
  missing: number[];
}

/** The inputs of a call, one per item (a token array is one input). */
export function itemsOf(request: EmbeddingsRequest): (string | number[])[] {
  return request.inputs.kind === 'text' ? request.inputs.texts : request.inputs.arrays;
}

export function itemKeys(request: EmbeddingsRequest, base: Record<string, unknown>): string[] {
  const dimensions = request.dimensions ?? null;
  return itemsOf(request).map((item) => cacheKey({ ...base, dimensions, item }));
}

/** base64 float32 → the numbers the float encoding gives. */
export function base64ToFloats(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const floats: number[] = new Array(bytes.length / 4);
  for (let i = 0; i < floats.length; i++) floats[i] = bytes.readFloatLE(i * 4);
  return floats;
}

/** The upstream body's `input` with only the missing items (a single input stays as it was sent). */
export function missingInput(request: EmbeddingsRequest, lookup: ItemLookup): unknown {
  const items = itemsOf(request);
  return lookup.missing.map((i) => items[i]);
}
