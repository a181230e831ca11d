/** What the log says when a provider could not be reached: the system's reason, read from undici's error. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectCause } from '../../src/providers/upstream-client.js';

const errno = (code: string, fields: Record<string, unknown>, message = code) =>
  Object.assign(new Error(message), { code, ...fields });

describe('connectCause', () => {
  it('names a refused connection with its address, a name not found, and a TLS refusal', () => {
    const refused = new TypeError('fetch failed', {
      cause: errno('ECONNREFUSED', { syscall: 'connect', address: '127.0.0.1', port: 8000 }),
    });
    assert.equal(connectCause(refused), 'ECONNREFUSED 127.0.0.1:8000');
    const notFound = errno('ENOTFOUND', { syscall: 'getaddrinfo', hostname: 'llm.internal' });
    assert.equal(connectCause(notFound), 'the name llm.internal was not found (ENOTFOUND)');
    const tls = errno('DEPTH_ZERO_SELF_SIGNED_CERT', {}, 'self-signed certificate');
    assert.equal(connectCause(tls), 'self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)');
  });

  it("skips undici's own wrapper codes and says nothing when there is no reason", () => {
    const wrapped = errno('UND_ERR_SOCKET', {}, 'other side closed');
    assert.equal(connectCause(wrapped), null);
    assert.equal(connectCause(new Error('no code')), null);
    assert.equal(connectCause('not an error'), null);
  });
});
