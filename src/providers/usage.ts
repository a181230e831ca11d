/**
 * A call's token counts in one shape, whichever provider answered: each kind's protocol reads its own
 * answer's usage into it (protocol.ts `usage`), and the routes log and price from it without knowing
 * the provider's field names.
 */

export interface TokenUsage {
  /**
   * Every input token, cache reads and writes included (as OpenAI's prompt_tokens counts them, and as a
   * price takes them); undefined when the provider did not say.
   */
  input: number | undefined;
  /** Output tokens, reasoning included; undefined when the provider did not say. */
  output: number | undefined;
  /** Of input, the tokens read from the provider's prompt cache. */
  cacheRead: number;
  /** Of input, the tokens written to the provider's prompt cache (for five minutes or for an hour). */
  cacheWrite: number;
  /** Of cacheWrite, the tokens written for an hour (priced higher than a five-minute write). */
  cacheWrite1h: number;
  /** Of output, the reasoning (thinking) tokens, when the provider says. */
  reasoning: number | undefined;
}

/** A token count as a provider reports it: a finite number at least 0, rounded; else undefined. */
export const tokenCount = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined;

/** The most tokens a log keeps in one count: two of them still fit the log's 32-bit total. */
export const MAX_TOKENS_LOGGED = 1_000_000_000;

const capped = (n: number) => Math.min(n, MAX_TOKENS_LOGGED);

/** A token count (a provider's, or a caller's max_tokens) as a log keeps it: at most a billion. */
export const loggedCount = (v: unknown): number | undefined => {
  const n = tokenCount(v);
  return n === undefined ? undefined : capped(n);
};

/** The counts as a log keeps them: each at most a billion, so a provider's nonsense cannot make a log the database refuses. */
export function loggedUsage(usage: Readonly<TokenUsage>): TokenUsage {
  return {
    input: usage.input === undefined ? undefined : capped(usage.input),
    output: usage.output === undefined ? undefined : capped(usage.output),
    cacheRead: capped(usage.cacheRead),
    cacheWrite: capped(usage.cacheWrite),
    cacheWrite1h: capped(usage.cacheWrite1h),
    reasoning: usage.reasoning === undefined ? undefined : capped(usage.reasoning),
  };
}
