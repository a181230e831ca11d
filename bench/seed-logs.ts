/**
 * Seeds a realistic request-log data set for one organization straight through the repository
 * (the same insert path the log writer uses): ~20 models, ~10k customers, 3–5 metadata keys per log,
 * scores on 10% of logs, 2% test logs, timestamps spread evenly over 7 days before `now`, and 60% of the
 * logs in sessions (sessionOf).
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { KeyIdentity } from '../src/auth/authenticator.js';
import type { Database } from '../src/db/schema.js';
import { loadPriceTable } from '../src/logs/pricing/price-table.js';
import { buildNewLog, type NewLog } from '../src/logs/write/new-log.js';
import { insertLogs } from '../src/logs/repository.js';
import { DEFAULT_LOG_MAX_BYTES } from '../src/config.js';

export const MODELS = Array.from({ length: 20 }, (_, i) =>
  i < 3 ? ['text-embedding-3-small', 'text-embedding-3-large', 'whisper-1'][i] : `model-${i}`,
);
const METADATA_KEYS = ['plan', 'region', 'feature', 'version', 'experiment', 'tier', 'team', 'channel'];
const VALUES: Record<string, string[]> = {
  plan: ['free', 'pro', 'enterprise'],
  region: ['eu-west', 'us-east', 'us-west', 'ap-south'],
  feature: Array.from({ length: 30 }, (_, i) => `feature-${i}`),
  version: ['1.0', '1.1', '2.0', '2.1', '3.0'],
  experiment: ['control', 'variant-a', 'variant-b'],
  tier: ['1', '2', '3'],
  team: Array.from({ length: 12 }, (_, i) => `team-${i}`),
  channel: ['web', 'ios', 'android', 'api'],
};

/** Logs per session's stretch of the seed: 60 of each 100 consecutive logs are one session's calls. */
export const SESSION_STRETCH = 100;

/**
 * The session (thread_identifier) of the i-th seeded log, or undefined: a function of i alone, so that
 * the random draws (and every other benchmark's data) stay what they were, and a store seeded before
 * sessions gets the same ones by SQL (bench-store.ts).
 */
export const sessionOf = (i: number) => (i % 10 < 6 ? `session-${Math.floor(i / SESSION_STRETCH)}` : undefined);

function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function seedLogs(
  db: Kysely<Database>,
  auth: KeyIdentity,
  testAuth: KeyIdentity,
  evaluatorIds: string[],
  rows: number,
  now: number,
  onProgress: (done: number) => void,
): Promise<void> {
  const random = rng(42);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const prices = loadPriceTable(null);
  const span = 7 * 24 * 3600_000;
  const chunk = 5000;
  for (let done = 0; done < rows; done += chunk) {
    const logs: NewLog[] = [];
    for (let i = done; i < Math.min(rows, done + chunk); i++) {
      const metadata: Record<string, string> = {};
      const keyCount = 3 + Math.floor(random() * 3);
      const keys = [...METADATA_KEYS].sort(() => random() - 0.5).slice(0, keyCount);
      for (const key of keys) metadata[key] = pick(VALUES[key]);
      const latency = Math.round(random() * 5000) / 1000;
      const log = buildNewLog(
        {
          log_method: 'logging_api',
          log_type: random() < 0.3 ? 'embedding' : 'chat',
          model: pick(MODELS),
          input: [{ role: 'user', content: `question ${i}` }],
          output: { role: 'assistant', content: `answer ${i}` },
          prompt_tokens: Math.floor(random() * 2000),
          completion_tokens: Math.floor(random() * 800),
          cost: Math.round(random() * 100000) / 1e6,
          latency,
          time_to_first_token: random() < 0.2 ? null : latency / 4,
          customer_identifier: `customer-${Math.floor(random() * 10_000)}`,
          thread_identifier: sessionOf(i),
          status_code: random() < 0.95 ? 200 : pick([400, 429, 500]),
          metadata,
          // Spread evenly over 7 days; i increases with time, as ids do for real traffic.
          timestamp: Math.round(now - span + (span * (i + random())) / rows),
        },
        random() < 0.02 ? testAuth : auth,
        prices,
        DEFAULT_LOG_MAX_BYTES,
      );
      logs.push(log);
    }
    await db.transaction().execute(async (trx) => {
      await insertLogs(trx, logs);
      const scored = logs.filter(() => random() < 0.1).map((l) => l.row.unique_id);
      if (scored.length === 0) return;
      const ids = await trx.selectFrom('logs').select(['id', 'unique_id']).where('unique_id', 'in', scored).execute();
      await trx
        .insertInto('scores')
        .values(
          ids.map((r) => ({
            id: crypto.randomUUID(),
            organization_id: auth.organizationId,
            log_id: r.id,
            evaluator_id: pick(evaluatorIds),
            numerical_value: Math.floor(random() * 5) + 1,
            boolean_value: null,
            score_value: Math.floor(random() * 5) + 1,
            created_at: now,
          })),
        )
        .execute();
    });
    onProgress(Math.min(rows, done + chunk));
  }
}
