/**
 * The tokens a call may use at most, as admission reserves them (docs/api.md "Rate limits"): its prompt
 * counted as it is sent, and its output limit — the one it asked for, else DEFAULT_MAX_OUTPUT_TOKENS.
 */
import type { ProxiedCall, ProxiedRoute } from './contract.js';

/** The output a call that sets no limit is reserved for. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

const COUNT_ALL = { perText: Number.POSITIVE_INFINITY, total: Number.POSITIVE_INFINITY, countAll: true };

export async function reservedTokens<Prepared>(
  call: ProxiedCall,
  route: ProxiedRoute<Prepared>,
  prepared: Prepared,
): Promise<number> {
  if (route.demand === undefined) return 0;
  const { prompt, maxOutputTokens } = route.demand(prepared);
  const promptTokens =
    typeof prompt === 'number' ? prompt : ((await call.deps.tokens.measure(prompt, COUNT_ALL)).total ?? 0);
  return promptTokens + (maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
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
