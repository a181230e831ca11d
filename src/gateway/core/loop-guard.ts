/**
 * Loop detection. gatelog marks every call it sends upstream with a header holding a mark of its
 * installation (derived from its secret key, which every replica of one installation shares), after the
 * marks the call arrived with: a call carries the marks of every gatelog it passed through. A proxied
 * call that arrives carrying this installation's mark has come back — a provider base_url pointing at
 * gatelog itself, or at another gatelog whose provider points back here — and is refused with 508
 * instead of going round again; so is one that passed through too many installations already, which
 * bounds a ring of any size and the header's length.
 */
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { addressPolicyOf } from '../../providers/address-policy.js';
import { UpstreamClient } from '../../providers/upstream-client.js';

export const LOOP_HEADER = 'x-gatelog-via';

/** Installations one call may pass through; a call arriving with this many marks is refused. */
export const MAX_VIA_MARKS = 8;

/** A mark as installationMark makes it; anything else in the header is not passed on. */
const MARK = /^[0-9a-f]{16}$/;

/** Not the key, nor enough of a hash of it to matter: 64 bits of a keyed digest. */
export function installationMark(secretKey: Buffer): string {
  return crypto.createHmac('sha256', secretKey).update('gatelog upstream loop mark').digest('hex').slice(0, 16);
}

/** What a proxied call's X-Gatelog-Via says: the marks it carries, and the 508 when it must not go on. */
export interface LoopCheck {
  /** The installations it passed through, in order (valid marks only, each once), to be passed on. */
  via: readonly string[];
  refusal: AppError | null;
}

const NO_LOOP: LoopCheck = { via: [], refusal: null };

/** Reads the marks a request carries and refuses it when it came back here or passed through too many. */
export function checkLoop(request: FastifyRequest, mark: string): LoopCheck {
  const header = request.headers[LOOP_HEADER];
  if (header === undefined) return NO_LOOP;
  const via: string[] = [];
  for (const value of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const candidate = value.trim().toLowerCase();
    if (MARK.test(candidate) && !via.includes(candidate)) via.push(candidate);
  }
  if (via.includes(mark)) {
    const refusal = new AppError(
      508,
      'proxy_loop',
      'This call came back to this gatelog: a provider base_url registered for the organization points at ' +
        'gatelog itself, or at another gatelog whose provider points back here. Register the provider’s own URL.',
    );
    return { via, refusal };
  }
  if (via.length >= MAX_VIA_MARKS) {
    const refusal = new AppError(
      508,
      'proxy_loop',
      `This call already passed through ${via.length} gatelog installations (X-Gatelog-Via), the most one ` +
        'call may: the providers registered in these installations likely point at one another.',
    );
    return { via, refusal };
  }
  return { via, refusal: null };
}

/** The upstream client as configured, marking its calls with the installation's mark. */
export function createUpstreamClient(config: Config, secretKey: Buffer): UpstreamClient {
  return new UpstreamClient({
    timeoutMs: config.upstreamTimeoutMs,
    maxResponseBytes: config.upstreamMaxResponseBytes,
    maxConnections: config.upstreamMaxConnections,
    loopMark: { header: LOOP_HEADER, mark: installationMark(secretKey) },
    addressPolicy: addressPolicyOf(config),
  });
}
