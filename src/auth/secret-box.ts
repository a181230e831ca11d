/**
 * AES-256-GCM for secrets at rest. The associated data binds a ciphertext to where it is stored, so a
 * value copied into another row (another organization, another provider) does not decrypt.
 */
import crypto from 'node:crypto';

const VERSION = 'v1';

export function seal(key: Buffer, plaintext: string, associatedData: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

export function open(key: Buffer, sealed: string, associatedData: string): string {
  const [version, payload] = sealed.split('.', 2);
  if (version !== VERSION || payload === undefined) throw new Error('unknown secret format');
  const raw = Buffer.from(payload, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
