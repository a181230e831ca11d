/**
 * Loop detection. gatelog marks every call it sends upstream with a header holding a mark of its
 * installation (derived from its secret key, which every replica of one installation shares). A proxied
 * call that arrives carrying that mark has come back to gatelog — a provider base_url pointing at
 * gatelog itself — and is refused with 508 instead of calling itself again and again.
 */
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { UpstreamClient } from '../providers/upstream-client.js';

export const LOOP_HEADER = 'x-gatelog-via';

/** Not the key, nor enough of a hash of it to matter: 64 bits of a keyed digest. */
export function installationMark(secretKey: Buffer): string {
  return crypto.createHmac('sha256', secretKey).update('gatelog upstream loop mark').digest('hex').slice(0, 16);
}

/** The 508 for a request that carries this installation's mark; null for any other request. */
export function ownCallError(request: FastifyRequest, mark: string): AppError | null {
  const via = request.headers[LOOP_HEADER];
  if (via === undefined) return null;
  const values = (Array.isArray(via) ? via.join(',') : via).split(',').map((v) => v.trim());
  if (values.includes(mark)) {
    return new AppError(
      508,
      'proxy_loop',
      'This call came from this gatelog itself: the provider base_url registered for the organization points ' +
        'back at gatelog. Register the provider’s own URL.',
    );
  }
  return null;
}

/** The upstream client as configured, marking its calls with the installation's mark. */
export function createUpstreamClient(config: Config, secretKey: Buffer): UpstreamClient {
  return new UpstreamClient({
    timeoutMs: config.upstreamTimeoutMs,
    maxResponseBytes: config.upstreamMaxResponseBytes,
    maxConnections: config.upstreamMaxConnections,
    headers: { [LOOP_HEADER]: installationMark(secretKey) },
  });
}
