/**
 * Table types for Kysely. Times are epoch milliseconds (bigint in PostgreSQL, integer in SQLite) and
 * booleans are 0/1 integers in both dialects, so one schema and one set of queries serve both.
 */
import type { Generated } from 'kysely';

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  name: string;
  /** Leading characters of the key, indexed for lookup; the key itself is never stored. */
  prefix: string;
  /** SHA-256 of the whole key, hex. */
  key_hash: string;
  is_test: number;
  owner_email: string;
  owner_first_name: string;
  owner_last_name: string;
  created_at: number;
  revoked_at: number | null;
}

export interface ProviderCredentialsTable {
  organization_id: string;
  provider: string;
  /** AES-256-GCM envelope, see auth/secret-box.ts. */
  api_key_encrypted: string;
  api_key_preview: string;
  base_url: string | null;
  created_at: number;
  updated_at: number;
}

export interface Database {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  provider_credentials: ProviderCredentialsTable;
}

export type { Generated };
