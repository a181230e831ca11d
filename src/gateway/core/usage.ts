/**
 * What a call used, and what it cost: a route reports what its answer said (reportUsage); the core
 * counts locally what the provider left out (estimateTokens), keeps the log's token counts and speed,
 * and prices the call (costOf) — in one place for every route, whether the answer came whole, streamed
 * or from the cache. The log's cost is set once, when it is recorded (record.ts).
 */
import { loggedUsage, MAX_TOKENS_LOGGED, type TokenUsage } from '../../providers/usage.js';
import type { CallUsed, ProxiedCall, UsageReport } from './call.js';

const LOCAL_COUNT = { perText: Number.POSITIVE_INFINITY, total: Number.POSITIVE_INFINITY, countAll: true };

/**
 * The call's counts from its answer: the provider's, else (a stream cut short, a server that does not
 * count) counted here from the texts the route gives, and the log marked `usage_source: estimated`.
 */
export async function reportUsage(call: ProxiedCall, report: UsageReport): Promise<void> {
  const { log } = call;
  const usage = report.usage === null ? null : loggedUsage(report.usage);
  let prompt = usage?.input;
  let completion = usage?.output;
  if ((prompt === undefined || completion === undefined) && report.texts !== null) {
    const estimate = await estimateTokens(call, report.texts());
    // The provider's cache reads and writes are its own counts, whatever it left out besides.
    prompt ??= Math.min(estimate.prompt + (usage?.cacheRead ?? 0) + (usage?.cacheWrite ?? 0), MAX_TOKENS_LOGGED);
    completion ??= estimate.completion;
    call.params.metadata = { ...call.params.metadata, usage_source: 'estimated' };
  }
  if (report.usage !== null || report.texts !== null) {
    log.prompt_tokens = prompt ?? 0;
    log.completion_tokens = completion ?? 0;
  }
  call.used = usedOf(report, usage, prompt ?? 0, completion ?? 0);
  const generating = report.generationSeconds ?? log.latency ?? 0;
  if (generating > 0 && (completion ?? 0) > 0) log.tokens_per_second = (completion ?? 0) / generating;
}

/**
 * The counts the provider has given so far, none counted here: for a request_breakdown sent before a
 * stream ends (its end reports the whole answer).
 */
export function usageSoFar(call: ProxiedCall, model: string, said: TokenUsage | null): void {
  const { log } = call;
  const usage = said === null ? null : loggedUsage(said);
  log.prompt_tokens = usage?.input ?? log.prompt_tokens;
  log.completion_tokens = usage?.output ?? log.completion_tokens;
  call.used = usedOf({ model, audioSeconds: undefined }, usage, usage?.input ?? 0, usage?.output ?? 0);
}

function usedOf(
  report: Pick<UsageReport, 'model' | 'audioSeconds'>,
  usage: TokenUsage | null,
  prompt: number,
  completion: number,
): CallUsed {
  return {
    model: report.model,
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: usage?.cacheRead ?? 0,
    cacheWriteTokens: usage?.cacheWrite ?? 0,
    cacheWrite1hTokens: usage?.cacheWrite1h ?? 0,
    audioSeconds: report.audioSeconds,
  };
}

/**
 * USD from the catalog for what the call used, cache reads and writes (those for an hour apart) each at
 * its own price; 0 for an answer from gatelog's cache; undefined when nothing was used yet or the model
 * has no price (the log then marks it unknown, new-log.ts).
 */
export function costOf(call: ProxiedCall): number | undefined {
  if (call.cache?.status === 'HIT') return 0;
  const { used } = call;
  if (used === null) return undefined;
  return call.deps.prices.cost({ ...used, providerId: call.provider?.name ?? call.log.provider_id }) ?? undefined;
}

/** Local token counts of a prompt's texts and an answer's, with gpt-tokenizer on a worker thread. */
async function estimateTokens(
  call: ProxiedCall,
  texts: { prompt: string[]; completion: string[] },
): Promise<{ prompt: number; completion: number }> {
  try {
    const [prompt, completion] = await Promise.all([
      call.deps.tokens.measure(texts.prompt, LOCAL_COUNT),
      call.deps.tokens.measure(texts.completion, LOCAL_COUNT),
    ]);
    return { prompt: prompt.total ?? 0, completion: completion.total ?? 0 };
  } catch {
    return { prompt: 0, completion: 0 };
  }
}
