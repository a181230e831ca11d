/** The logging API's operations on single logs (docs/api.md "Logging API"), on top of the writer and repository. */
import { z } from 'zod';
import type { KeyIdentity } from '../auth/authenticator.js';
import type { Config } from '../config.js';
import type { DbHandle } from '../db/connect.js';
import { AppError, notFound } from '../errors.js';
import { zodToAppError } from '../util/validation.js';
import { LogInput } from './write/ingest-schema.js';
import { checkIndexedText, checkMetadata, INDEXED_TEXT_BYTES } from './indexed-text.js';
import { fieldsFromInput } from './write/ingest.js';
import { buildNewLog, type NewLog } from './write/new-log.js';
import type { LogWriter } from './write/writer.js';
import { type LogItem, presentLog } from './present.js';
import { deleteLog, findLog, type LogRowWithOrg, scoresOfLogs, updateLog } from './repository.js';

export const MAX_BATCH = 1000;

/** What these operations use of the service (named here: logs/ depends on no layer above it). */
interface Deps {
  readonly db: DbHandle;
  readonly config: Config;
  /** The price table buildNewLog costs a log with. */
  readonly prices: Parameters<typeof buildNewLog>[2];
  readonly writer: LogWriter;
}

function validate(body: unknown, pathPrefix: string): LogInput {
  const result = LogInput.safeParse(body);
  if (!result.success) throw zodToAppError(result.error, pathPrefix);
  const at = (name: string) => (pathPrefix ? `${pathPrefix}.${name}` : name);
  checkIndexedText(result.data.model, INDEXED_TEXT_BYTES.model, at('model'));
  checkIndexedText(result.data.provider_id, INDEXED_TEXT_BYTES.provider_id, at('provider_id'));
  checkMetadata(result.data.metadata, at('metadata'));
  return result.data;
}

function requireObject(body: unknown, param: string | null): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError(400, 'invalid_value', `${param ?? 'The body'} must be a JSON object.`, param);
  }
}

/** One log as the logging API takes it, checked and built (a 400 AppError naming `pathPrefix`'s field if not). */
export function buildLoggedLog(
  deps: Pick<Deps, 'config' | 'prices'>,
  auth: KeyIdentity,
  body: unknown,
  pathPrefix: string,
): NewLog {
  requireObject(body, pathPrefix || null);
  return buildNewLog(fieldsFromInput(validate(body, pathPrefix)), auth, deps.prices, deps.config.logMaxBytes);
}

/** Answers once the log is committed (a durable acknowledgement). */
export async function ingestOne(deps: Deps, auth: KeyIdentity, body: unknown): Promise<string> {
  const log = buildLoggedLog(deps, auth, body, '');
  await deps.writer.write([log]);
  return log.row.unique_id;
}

/**
 * All or nothing: every log is validated before any is written, they are written in one transaction,
 * and the call is answered once they are committed.
 */
export async function ingestBatch(deps: Deps, auth: KeyIdentity, body: unknown): Promise<string[]> {
  const bare = Array.isArray(body);
  const logs = bare ? body : (body as { logs?: unknown } | null)?.logs;
  if (!Array.isArray(logs)) {
    throw new AppError(400, 'invalid_value', 'Send {"logs": [...]} or a JSON array of logs.', 'logs');
  }
  if (logs.length === 0) throw new AppError(400, 'invalid_value', 'logs must hold at least one log.', 'logs');
  if (logs.length > MAX_BATCH) {
    throw new AppError(400, 'too_many_logs', `A batch holds at most ${MAX_BATCH} logs; got ${logs.length}.`, 'logs');
  }
  const built: NewLog[] = logs.map((entry, index) => {
    return buildLoggedLog(deps, auth, entry, bare ? String(index) : `logs.${index}`);
  });
  await deps.writer.write(built);
  return built.map((l) => l.row.unique_id);
}

/** A log by unique_id in the caller's organization; waits for the writer when it is still queued. */
export async function loadLog(deps: Deps, auth: KeyIdentity, uniqueId: string): Promise<LogRowWithOrg> {
  if (deps.writer.isPending(uniqueId)) await deps.writer.flush();
  const row = await findLog(deps.db.db, auth.organizationId, uniqueId);
  if (!row) throw notFound(`No log with unique_id '${uniqueId}'.`);
  return row;
}

export async function getLogItem(deps: Deps, auth: KeyIdentity, uniqueId: string): Promise<LogItem> {
  const row = await loadLog(deps, auth, uniqueId);
  const scores = await scoresOfLogs(deps.db.db, [row.id]);
  return presentLog(row, scores.get(row.id) ?? {});
}

/** Only these fields of a stored log can change; any other is a 400 naming it (the route validates). */
export const PatchLogBody = z.strictObject({
  metadata: z.record(z.string(), z.unknown()).optional().describe('Replaces the metadata'),
  custom_identifier: z.string().nullable().optional(),
});

export async function patchLog(
  deps: Deps,
  auth: KeyIdentity,
  uniqueId: string,
  changes: z.output<typeof PatchLogBody>,
): Promise<LogItem> {
  checkMetadata(changes.metadata);
  const row = await loadLog(deps, auth, uniqueId);
  await updateLog(deps.db.db, row, changes);
  return getLogItem(deps, auth, uniqueId);
}

export async function removeLog(deps: Deps, auth: KeyIdentity, uniqueId: string): Promise<void> {
  const row = await loadLog(deps, auth, uniqueId);
  await deleteLog(deps.db.db, row);
}
