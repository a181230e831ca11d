/**
 * Seeds a realistic request-log data set for one organization straight through the repository
 * (the same insert path the log writer uses): ~20 models, ~10k customers, 3–5 metadata keys per log,
 * scores on 10% of logs, 2% test logs, timestamps spread evenly over 7 days (or `days`) before `now`, and 60% of the
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

/** The seed's days: the 1M-log store's, unchanged so that its figures stay comparable. */
/** The human evaluators a seed's scores are drawn for (`seedGenerator`'s evaluatorIds), stored for `organizationId`. */
export async function insertSeedEvaluators(db: Kysely<Database>, organizationId: string, ids: readonly string[]) {
  for (const [i, id] of ids.entries()) {
    await db
      .insertInto('evaluators')
      .values({
        id,
        organization_id: organizationId,
        name: `e${i}`,
        evaluator_slug: `e${i}`,
        type: 'human',
        score_value_type: 'numerical',
        description: '',
        created_at: 0,
        updated_at: 0,
      })
      .execute();
  }
}

export const SEED_DAYS = 7;

/**
 * Logs per chunk of the seed: which logs are scored is drawn after each chunk, so a writer in larger
 * batches draws chunk by chunk to get the same data.
 */
export const SEED_CHUNK = 5000;

/**
 * The seed's logs and scores, drawn from one stream of random numbers (seed 42) in a fixed order: a chunk
 * of logs, then which of them are scored, then each score. Whoever writes them (seedLogs through the
 * repository, bulk-seed.ts in large batches) gets the same data for the same rows, days and `now`.
 */
export function seedGenerator(
  auth: KeyIdentity,
  testAuth: KeyIdentity,
  evaluatorIds: string[],
  rows: number,
  now: number,
  days = SEED_DAYS,
) {
  const random = rng(42);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const prices = loadPriceTable(null);
  const span = days * 24 * 3600_000;
  return {
    /** The logs `from` to `to` (exclusive), drawn in order: call with consecutive ranges. */
    logs(from: number, to: number): NewLog[] {
      const logs: NewLog[] = [];
      for (let i = from; i < Math.min(rows, to); i++) {
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
            // Spread evenly over the span; i increases with time, as ids do for real traffic.
            timestamp: Math.round(now - span + (span * (i + random())) / rows),
          },
          random() < 0.02 ? testAuth : auth,
          prices,
          DEFAULT_LOG_MAX_BYTES,
        );
        logs.push(log);
      }
      return logs;
    },
    /** Which of a chunk's logs are scored (one draw each, in order). */
    scored: <T>(logs: readonly T[]): T[] => logs.filter(() => random() < 0.1),
    /** One scored log's score: its evaluator and value. */
    score: () => {
      const evaluatorId = pick(evaluatorIds);
      const numerical = Math.floor(random() * 5) + 1;
      return { evaluatorId, numerical, value: Math.floor(random() * 5) + 1 };
    },
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
  days = SEED_DAYS,
): Promise<void> {
  const seed = seedGenerator(auth, testAuth, evaluatorIds, rows, now, days);
  const chunk = SEED_CHUNK;
  for (let done = 0; done < rows; done += chunk) {
    const logs = seed.logs(done, done + chunk);
    await db.transaction().execute(async (trx) => {
      await insertLogs(trx, logs);
      const scored = seed.scored(logs).map((l) => l.row.unique_id);
      if (scored.length === 0) return;
      const ids = await trx.selectFrom('logs').select(['id', 'unique_id']).where('unique_id', 'in', scored).execute();
      await trx
        .insertInto('scores')
        .values(
          ids.map((r) => {
            const { evaluatorId, numerical, value } = seed.score();
            return {
              id: crypto.randomUUID(),
              organization_id: auth.organizationId,
              log_id: r.id,
              evaluator_id: evaluatorId,
              numerical_value: numerical,
              boolean_value: null,
              score_value: value,
              created_at: now,
            };
          }),
        )
        .execute();
    });
    onProgress(Math.min(rows, done + chunk));
  }
}
