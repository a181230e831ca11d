/**
 * An upload that starts upstream while it still arrives (speech-to-text): the provider gets the body as
 * the caller sends it, and the core completes or abandons it once the call is read (tries.ts).
 */
import type { Readable } from 'node:stream';
import { pickKey } from '../../providers/choose-provider.js';
import { authenticateWith, baseUrlOf } from '../../providers/kind.js';
import type { UpstreamCall } from './contract.js';
import type { EarlyUpstream, ProxiedCall } from './call.js';
import { assertUpstreamAllowed } from './credential.js';

/**
 * Starts a route's upstream call before its caller's body has been read whole, so that a large upload
 * travels to the provider while it arrives instead of after (docs/decisions.md "Speech-to-text"). Only
 * with the organization's registered key: a key in customer_credentials may still follow. The body is
 * not ended here: the lifecycle ends it (completeEarly) once the call is valid and its key is the one
 * used, or destroys it, so a refused call never reaches the provider whole. False when it cannot start
 * (no registered key, no room for the log): the call then goes upstream once read, as usual.
 */
export async function dispatchEarly(
  call: ProxiedCall,
  provider: string,
  request: UpstreamCall & { body: Readable },
): Promise<boolean> {
  const { deps } = call;
  if (call.early !== null || call.prepared) return false;
  let registered;
  try {
    registered = await deps.providerKeys.get(call.auth.organizationId, provider);
    if (registered?.baseUrl) assertUpstreamAllowed(deps.config, registered.baseUrl, 'base_url');
  } catch {
    return false;
  }
  // Checked again after the wait: the call may have been read whole (or refused) meanwhile.
  const key = pickKey(registered?.keys ?? []);
  if (!registered || !key || !deps.writer.hasRoom(1)) return false;
  if (call.early !== null || call.prepared) return false;
  const kind = deps.providerKinds.get(registered.kind);
  if (kind === undefined || !kind.protocol.uploadsEarly) return false;
  const baseUrl = baseUrlOf(kind, registered, deps.config);
  if (baseUrl === null) return false;
  const auth = authenticateWith(kind, key.apiKey, registered.options);
  const checkAddress = registered.baseUrl !== null;
  const early = { ...request, baseUrl, auth, via: call.via, checkAddress, bodyStillArriving: true };
  const response = deps.upstream.post(early);
  const started: EarlyUpstream = {
    body: request.body,
    provider,
    apiKey: key.apiKey,
    baseUrl,
    response,
    failed: false,
    sent: false,
  };
  response.catch(() => {
    started.failed = true;
  });
  call.early = started;
  return true;
}

/** Abandons an early upstream call: its body ends in an error, so the provider never gets it whole. */
export function abandonEarly(early: EarlyUpstream): void {
  early.body.destroy(new Error('the call was not sent'));
}
