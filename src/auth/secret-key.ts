/**
 * Resolves the 32-byte key that encrypts provider keys at rest. GATELOG_SECRET_KEY wins; otherwise a
 * SQLite set-up keeps a generated key in `secret.key` beside the database file (mode 0600), so the
 * default install needs no configuration. An in-memory database gets a key for this process only.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, ConfigError, decodeSecretKey } from '../config.js';

export function secretKeyPath(databasePath: string): string {
  return path.join(path.dirname(path.resolve(databasePath)), 'secret.key');
}

export function resolveSecretKey(config: Config): Buffer {
  if (config.secretKey) return config.secretKey;
  if (config.database.kind !== 'sqlite') {
    throw new ConfigError('GATELOG_SECRET_KEY', 'is required with PostgreSQL');
  }
  if (config.database.path === ':memory:') return crypto.randomBytes(32);
  const file = secretKeyPath(config.database.path);
  try {
    return readOrCreate(file);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      'GATELOG_SECRET_KEY',
      `unset, and the key file ${file} cannot be read or created: ${(err as Error).message}`,
    );
  }
}

function readOrCreate(file: string): Buffer {
  if (fs.existsSync(file)) return decodeSecretKey(fs.readFileSync(file, 'utf8'), file);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const key = crypto.randomBytes(32);
  // 'wx' fails if another process created the file meanwhile; then its key is the one to use.
  try {
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return decodeSecretKey(fs.readFileSync(file, 'utf8'), file);
  }
  return key;
}

/** Where the secret key comes from, for the start-up line. */
export function secretKeySource(config: Config): string {
  if (config.secretKey) return 'from GATELOG_SECRET_KEY';
  if (config.database.kind === 'sqlite' && config.database.path === ':memory:') return 'generated for this process';
  if (config.database.kind === 'sqlite') return `in ${secretKeyPath(config.database.path)}`;
  return 'missing';
}
