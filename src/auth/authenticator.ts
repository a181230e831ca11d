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

export interface AuthContext {
  organizationId: string;
  organizationName: string;
  keyId: string;
  keyName: string;
  isTest: boolean;
  owner: KeyOwner;
}

const CACHE_TTL_MS = 1000;
const CACHE_MAX_ENTRIES = 10_000;

export class Authenticator {
  private readonly cache = new Map<string, { context: AuthContext | null; expiresAt: number }>();

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
    let context: AuthContext | null;
    if (cached && cached.expiresAt > now) {
      context = cached.context;
    } else {
      try {
        context = await this.lookup(key, keyHash);
      } catch (err) {
        // While the database is down, a key seen before keeps working (proxied calls must go on,
        // docs/api.md "Durability and visibility"); a key never seen cannot be checked.
        if (cached) return this.orInvalid(cached.context, key);
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
      this.cache.set(keyHash, { context, expiresAt: now + CACHE_TTL_MS });
    }
    return this.orInvalid(context, key);
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

  private orInvalid(context: AuthContext | null, key: string): AuthContext {
    if (context === null) throw new AppError(401, 'invalid_api_key', invalidKeyMessage(key));
    return context;
  }

  private async lookup(key: string, keyHash: string): Promise<AuthContext | null> {
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
        'organizations.id as organization_id',
        'organizations.name as organization_name',
      ])
      .where('api_keys.prefix', '=', key.slice(0, KEY_PREFIX_LENGTH))
      .execute();
    const wanted = Buffer.from(keyHash, 'hex');
    const row = rows.find((r) => crypto.timingSafeEqual(Buffer.from(r.key_hash, 'hex'), wanted));
    if (!row || row.revoked_at !== null) return null;
    return {
      organizationId: row.organization_id,
      organizationName: row.organization_name,
      keyId: row.id,
      keyName: row.name,
      isTest: row.is_test === 1,
      owner: { email: row.owner_email, first_name: row.owner_first_name, last_name: row.owner_last_name },
    };
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
