/**
 * The most a call may use, as admission reserves it (docs/api.md "Rate limits", "Budgets"): its prompt's
 * tokens counted as it is sent, and its output limit — the one it asked for, else
 * DEFAULT_MAX_OUTPUT_TOKENS; its highest possible cost is that at the dearest model it may reach.
 */
import type { PriceTable } from '../../logs/pricing/price-table.js';
import type { ProxiedRoute } from './contract.js';
import type { ProxiedCall } from './call.js';
import type { Target } from './targets.js';

/** The output a call that sets no limit is reserved for. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

const COUNT_ALL = { perText: Number.POSITIVE_INFINITY, total: Number.POSITIVE_INFINITY, countAll: true };
/**
 * A prompt of at most this many UTF-8 bytes is reserved at its byte count — every token covers at least
 * one byte, so it is never less than its tokens — rather than counted on the token worker: the few
 * tokens it may over-reserve are given back when the call ends, and most calls skip a thread hop.
 */
const COUNTED_FROM_BYTES = 2048;

export interface MeasuredDemand {
  promptTokens: number;
  outputTokens: number;
  /** Seconds of audio (a transcription); null when its length could not be read; absent when none. */
  audioSeconds?: number | null;
}

export async function measureDemand<Prepared>(
  call: ProxiedCall,
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
): Promise<MeasuredDemand> {
  if (route.demand === undefined) return { promptTokens: 0, outputTokens: 0 };
  const { prompt, maxOutputTokens, audioSeconds } = route.demand(prepared);
  const outputTokens = maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  if (audioSeconds !== undefined) {
    // Whole seconds: a provider bills a second begun (OpenAI's usage counts the length so).
    const seconds = await audioSeconds;
    return { promptTokens: 0, outputTokens: 0, audioSeconds: seconds === null ? null : Math.ceil(seconds) };
  }
  if (typeof prompt === 'number') return { promptTokens: prompt, outputTokens };
  let bytes = 0;
  for (const text of prompt) {
    bytes += Buffer.byteLength(text, 'utf8');
    if (bytes > COUNTED_FROM_BYTES) break;
  }
  const promptTokens =
    bytes <= COUNTED_FROM_BYTES ? bytes : ((await call.deps.tokens.measure(prompt, COUNT_ALL)).total ?? 0);
  return { promptTokens, outputTokens };
}

/**
 * The highest the call may cost (USD): at the dearest of the models it may try, every prompt token
 * priced as the dearest kind of input (a write to a provider's one-hour prompt cache costs more than
 * plain input). Null when one of those models has no known price (or the audio's length is not known).
 */
export function highestCost(prices: PriceTable, targets: readonly Target[], demand: MeasuredDemand): number | null {
  if (demand.audioSeconds === null) return null;
  let highest = 0;
  const at = Date.now();
  for (const { credential } of targets) {
    const usage = {
      model: credential.provider.model,
      providerId: credential.provider.name,
      promptTokens: demand.promptTokens,
      completionTokens: demand.outputTokens,
      audioSeconds: demand.audioSeconds ?? undefined,
      at,
    };
    const plain = prices.cost(usage);
    if (plain === null) return null;
    const cached = prices.cost({
      ...usage,
      cacheWriteTokens: demand.promptTokens,
      cacheWrite1hTokens: demand.promptTokens,
    });
    highest = Math.max(highest, plain, cached ?? 0);
  }
  return highest;
}

/** A body's output limit (max_tokens and the like), when it is a positive whole number. */
export function outputLimit(...values: unknown[]): number | null {
  for (const value of values) if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  return null;
}

/** Texts of a prompt's parts: strings as they are, anything else (content parts, tools) as its JSON. */
export function promptTexts(values: readonly unknown[]): string[] {
  const texts: string[] = [];
  for (const value of values) {
    if (value === undefined || value === null) continue;
    texts.push(typeof value === 'string' ? value : JSON.stringify(value));
  }
  return texts;
}
