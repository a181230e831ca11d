/**
 * Resolves an API key (a Bearer key, or an `x-api-key` header on the routes that take one) to its
 * organization and key facts. Results (including "no such key") are cached
 * for one second, so auth is not a database round trip per request while a revocation made by another
 * process still takes effect within a second.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { AppError, INVALID_KEY, NOT_AUTHENTICATED } from '../errors.js';
import { hashKey, KEY_PREFIX_LENGTH, type KeyOwner } from './api-keys.js';
import { parseKeyControls, type RateLimits } from './key-controls.js';
import type { Scope } from './scopes.js';

/** Who made a request: what a log records of its key. */
export interface KeyIdentity {
  organizationId: string;
  organizationName: string;
  keyId: string;
  keyName: string;
  isTest: boolean;
  owner: KeyOwner;
}

/** The key of an authenticated request: who it is and what it may do. */
export interface AuthContext extends KeyIdentity {
  scopes: readonly Scope[];
  /** Names, `prefix*` and `provider/*`; empty allows every model (auth/model-patterns.ts). */
  allowedModels: readonly string[];
  rateLimits: RateLimits;
  /** Epoch ms, or null for a key that does not expire. */
  expiresAt: number | null;
}

/** A key as looked up: its context and until when this secret is valid (expiry, or a rotation's grace). */
interface Lookup {
  context: AuthContext;
  validUntil: number | null;
}

/** How often a key's last_used_at is written at most: it is "last used", not an access log. */
const LAST_USED_EVERY_MS = 60_000;

const CACHE_TTL_MS = 1000;
const CACHE_MAX_ENTRIES = 10_000;

export class Authenticator {
  private readonly cache = new Map<string, { found: Lookup | null; expiresAt: number }>();

  constructor(private readonly db: Kysely<Database>) {}

  /** The context for an Authorization header value, or a 401 AppError. */
  async authenticate(header: string | undefined): Promise<AuthContext> {
    if (header === undefined || header.trim() === '') throw new AppError(401, 'not_authenticated', NOT_AUTHENTICATED);
    const match = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new AppError(401, 'invalid_api_key', `${INVALID_KEY}: send it as "Authorization: Bearer <key>".`);
    }
    return this.authenticateKey(match[1]);
  }

  /** The context for a key given on its own (an `x-api-key` header, where a route takes one), or a 401. */
  async authenticateKey(key: string): Promise<AuthContext> {
    const keyHash = hashKey(key);
    const now = Date.now();
    const cached = this.cache.get(keyHash);
    let found: Lookup | null;
    if (cached && cached.expiresAt > now) {
      found = cached.found;
    } else {
      try {
        found = await this.lookup(key, keyHash, now);
      } catch (err) {
        // While the database is down, a key seen before keeps working (proxied calls must go on,
        // docs/api.md "Durability and visibility"); a key never seen cannot be checked.
        if (cached) return this.orInvalid(cached.found, key, now);
        throw new AppError(
          503,
          'database_unavailable',
          'The service cannot check API keys right now; retry shortly.',
          null,
          {},
          err,
        );
      }
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
      this.cache.set(keyHash, { found, expiresAt: now + CACHE_TTL_MS });
    }
    return this.orInvalid(found, key, now);
  }

  /** Drops what was looked up: a key changed here takes effect on this node at once (elsewhere within 1 s). */
  forgetAll(): void {
    this.cache.clear();
  }

  /**
   * Whether a credential that was valid still is (the live tail asks every second): false once its key
   * is revoked or gone; throws while the database cannot say (and no answer is cached).
   */
  async stillValid(header: string): Promise<boolean> {
    try {
      await this.authenticate(header);
      return true;
    } catch (err) {
      if (err instanceof AppError && err.status === 401) return false;
      throw err;
    }
  }

  private orInvalid(found: Lookup | null, key: string, now: number): AuthContext {
    // An expired key, or a rotated secret past its grace, is refused as a revoked one.
    if (found === null || (found.validUntil !== null && found.validUntil <= now)) {
      throw new AppError(401, 'invalid_api_key', invalidKeyMessage(key));
    }
    return found.context;
  }

  private async lookup(key: string, keyHash: string, now: number): Promise<Lookup | null> {
    const prefix = key.slice(0, KEY_PREFIX_LENGTH);
    const rows = await this.db
      .selectFrom('api_keys')
      .innerJoin('organizations', 'organizations.id', 'api_keys.organization_id')
      .select([
        'api_keys.id',
        'api_keys.name',
        'api_keys.key_hash',
        'api_keys.is_test',
        'api_keys.revoked_at',
        'api_keys.owner_email',
        'api_keys.owner_first_name',
        'api_keys.owner_last_name',
        'api_keys.scopes',
        'api_keys.allowed_models',
        'api_keys.rate_limits',
        'api_keys.expires_at',
        'api_keys.last_used_at',
        'api_keys.previous_key_hash',
        'api_keys.previous_valid_until',
        'organizations.id as organization_id',
        'organizations.name as organization_name',
      ])
      .where((eb) => eb.or([eb('api_keys.prefix', '=', prefix), eb('api_keys.previous_prefix', '=', prefix)]))
      .execute();
    const wanted = Buffer.from(keyHash, 'hex');
    const same = (hash: string | null) => hash !== null && crypto.timingSafeEqual(Buffer.from(hash, 'hex'), wanted);
    const row = rows.find((r) => same(r.key_hash) || same(r.previous_key_hash));
    if (!row || row.revoked_at !== null) return null;
    // The previous secret is valid only within its grace (none recorded: not at all).
    const graceUntil = same(row.key_hash) ? null : (row.previous_valid_until ?? 0);
    if (row.last_used_at === null || row.last_used_at < now - LAST_USED_EVERY_MS) this.markUsed(row.id, now);
    const controls = parseKeyControls(row);
    return {
      context: {
        organizationId: row.organization_id,
        organizationName: row.organization_name,
        keyId: row.id,
        keyName: row.name,
        isTest: row.is_test === 1,
        owner: { email: row.owner_email, first_name: row.owner_first_name, last_name: row.owner_last_name },
        scopes: controls.scopes,
        allowedModels: controls.allowed_models,
        rateLimits: controls.rate_limits,
        expiresAt: row.expires_at,
      },
      validUntil: earliest(row.expires_at, graceUntil),
    };
  }

  /** Records that a key was used, without holding the request (a failed write only delays the mark). */
  private markUsed(keyId: string, now: number): void {
    void this.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', keyId)
      .execute()
      .catch(() => undefined);
  }
}

/**
 * Why a key was refused, for the person holding it: a model provider's own key sent to gatelog is the
 * usual mistake of a first set-up, and "invalid or expired" alone sends them looking at the provider.
 */
export function invalidKeyMessage(key: string): string {
  const provider = key.startsWith('sk-ant-') ? 'Anthropic' : key.startsWith('sk-') ? 'OpenAI' : null;
  if (provider === null) return INVALID_KEY;
  return (
    `${INVALID_KEY}: this looks like an ${provider} key, not a gatelog API key. Send a gatelog key ` +
    "(made with `gatelog keys create`) and register the provider's key with gatelog instead: " +
    "POST /api/provider-keys/ or the web UI's settings."
  );
}

function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}
