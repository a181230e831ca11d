/**
 * Validation of an embeddings request (docs/api.md "Embeddings proxy") before anything goes upstream.
 */
import { AppError } from '../../errors.js';
import type { TokenCounter } from '../tokens/token-counter.js';

/** A Map, not an object: a model named "constructor" must not find Object.prototype's. */
export const EMBEDDING_MODELS: ReadonlyMap<string, { dimensions: number; customDimensions: boolean }> = new Map([
  ['text-embedding-3-large', { dimensions: 3072, customDimensions: true }],
  ['text-embedding-3-small', { dimensions: 1536, customDimensions: true }],
  ['text-embedding-ada-002', { dimensions: 1536, customDimensions: false }],
]);

export const MAX_INPUTS = 2048;
export const MAX_TOKENS_PER_INPUT = 8192;
export const MAX_TOKENS_PER_REQUEST = 300_000;

/** The accepted input shapes; token ids stand for text already tokenized. */
export type EmbeddingInputs =
  { kind: 'text'; texts: string[]; single: boolean } | { kind: 'tokens'; arrays: number[][]; single: boolean };

export interface EmbeddingsRequest {
  model: string;
  inputs: EmbeddingInputs;
  encodingFormat: 'float' | 'base64' | undefined;
  dimensions: number | undefined;
}

const bad = (message: string, param: string, code = 'invalid_value') => new AppError(400, code, message, param);

const isTokenId = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function parseInputs(input: unknown): EmbeddingInputs {
  if (input === undefined || input === null) throw bad('input is required.', 'input');
  if (typeof input === 'string') {
    if (input === '') throw bad('input must not be the empty string.', 'input');
    return { kind: 'text', texts: [input], single: true };
  }
  if (!Array.isArray(input)) {
    throw bad(
      'input must be a string, an array of strings, an array of token ids, or an array of token arrays.',
      'input',
    );
  }
  if (input.length === 0) throw bad('input must hold at least one entry.', 'input');
  if (input.length > MAX_INPUTS) throw bad(`input holds ${input.length} entries; at most ${MAX_INPUTS}.`, 'input');
  if (input.every((v) => typeof v === 'string')) {
    const empty = input.findIndex((v) => v === '');
    if (empty >= 0) throw bad(`input.${empty} must not be the empty string.`, `input.${empty}`);
    return { kind: 'text', texts: input as string[], single: false };
  }
  if (input.every(isTokenId)) return { kind: 'tokens', arrays: [input as number[]], single: true };
  if (input.every((v) => Array.isArray(v))) {
    input.forEach((arr: unknown[], index) => {
      if (arr.length === 0) throw bad(`input.${index} must not be an empty token array.`, `input.${index}`);
      if (!arr.every(isTokenId))
        throw bad(`input.${index} must hold non-negative integer token ids.`, `input.${index}`);
    });
    return { kind: 'tokens', arrays: input as number[][], single: false };
  }
  throw bad('input mixes strings, token ids and token arrays; use one shape.', 'input');
}

/**
 * Enforces 300,000 tokens per request, and 8,192 per input for OpenAI's models (`perInput` false: a
 * model of another server, whose own limit it enforces itself).
 */
async function checkTokens(inputs: EmbeddingInputs, tokens: TokenCounter, perInput: boolean): Promise<void> {
  const paramOf = (index: number) => (inputs.single ? 'input' : `input.${index}`);
  if (inputs.kind === 'tokens') {
    let total = 0;
    inputs.arrays.forEach((arr, index) => {
      if (perInput && arr.length > MAX_TOKENS_PER_INPUT) {
        throw bad(
          `${paramOf(index)} has ${arr.length} tokens; the model accepts at most ${MAX_TOKENS_PER_INPUT}.`,
          paramOf(index),
          'context_length_exceeded',
        );
      }
      total += arr.length;
    });
    if (total > MAX_TOKENS_PER_REQUEST) {
      throw bad(
        `The request has ${total} tokens; at most ${MAX_TOKENS_PER_REQUEST} in all.`,
        'input',
        'max_tokens_per_request',
      );
    }
    return;
  }
  const measure = await tokens.measure(inputs.texts, {
    perText: perInput ? MAX_TOKENS_PER_INPUT : Infinity,
    total: MAX_TOKENS_PER_REQUEST,
  });
  if (measure.overText) {
    const { index, tokens: counted } = measure.overText;
    throw bad(
      `${paramOf(index)} has more than ${MAX_TOKENS_PER_INPUT} tokens (${counted} counted before stopping); ` +
        `the model accepts at most ${MAX_TOKENS_PER_INPUT}.`,
      paramOf(index),
      'context_length_exceeded',
    );
  }
  if (measure.overTotal !== null) {
    throw bad(
      `The request has more than ${MAX_TOKENS_PER_REQUEST} tokens (${measure.overTotal} counted before stopping); ` +
        `at most ${MAX_TOKENS_PER_REQUEST} in all.`,
      'input',
      'max_tokens_per_request',
    );
  }
}

/**
 * `anyModel`: the call goes to a server of the caller's own (a provider key registered with a base_url),
 * which serves models of its own: any model name is taken, and only OpenAI's models are checked against
 * what OpenAI's models accept.
 */
export async function parseEmbeddingsRequest(
  body: Record<string, unknown>,
  tokens: TokenCounter,
  anyModel = false,
): Promise<EmbeddingsRequest> {
  const { model, input, encoding_format, dimensions } = body;
  const spec = typeof model === 'string' ? EMBEDDING_MODELS.get(model) : undefined;
  if (anyModel && (typeof model !== 'string' || model.trim() === '')) {
    throw bad('model must be the name of a model the provider serves.', 'model');
  }
  if (!anyModel && (typeof model !== 'string' || spec === undefined)) {
    throw bad(`model must be one of ${[...EMBEDDING_MODELS.keys()].join(', ')}.`, 'model', 'model_not_found');
  }
  const inputs = parseInputs(input);
  if (encoding_format !== undefined && encoding_format !== 'float' && encoding_format !== 'base64') {
    throw bad("encoding_format must be 'float' or 'base64'.", 'encoding_format');
  }
  let dims: number | undefined;
  if (dimensions !== undefined && dimensions !== null) {
    if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1) {
      throw bad('dimensions must be an integer of at least 1.', 'dimensions');
    }
    if (spec && !spec.customDimensions)
      throw bad(`${model} does not support dimensions; only text-embedding-3 models do.`, 'dimensions');
    if (spec && dimensions > spec.dimensions)
      throw bad(`dimensions must be at most ${spec.dimensions} for ${model}.`, 'dimensions');
    dims = dimensions;
  }
  await checkTokens(inputs, tokens, spec !== undefined);
  return {
    model: model as string,
    inputs,
    encodingFormat: encoding_format as EmbeddingsRequest['encodingFormat'],
    dimensions: dims,
  };
}

/** Local token count of the inputs, for a log when the upstream reports no usage. */
export async function localTokenCount(inputs: EmbeddingInputs, tokens: TokenCounter): Promise<number> {
  if (inputs.kind === 'tokens') return inputs.arrays.reduce((sum, a) => sum + a.length, 0);
  const limits = { perText: Infinity, total: Infinity, countAll: true };
  return (await tokens.measure(inputs.texts, limits)).total ?? 0;
}
