import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { UpstreamClient, type UpstreamStream } from '../../src/providers/upstream-client.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';

/**
 * A streamed call holds its upstream connection while the model writes. With a cap on connections per
 * origin, the call past the cap waits for a whole stream to end before its first token; without one
 * (the default) every stream starts at once.
 */
describe('upstream connections', () => {
  let fake: FakeUpstream;
  before(async () => {
    fake = await startFakeUpstream();
    // Headers at once, the first event only after the test has counted the streams it opened.
    fake.chat({ firstEventDelayMs: 20_000 });
  });
  after(() => fake.close());

  /**
   * Opens `count` streams; waits (15 s at most, for a loaded machine) until `awaited` have their
   * headers, then `settleMs` more, and resolves with how many had their headers by then.
   */
  async function openStreams(
    client: UpstreamClient,
    count: number,
    awaited: number,
    settleMs: number,
  ): Promise<number> {
    const opened: UpstreamStream[] = [];
    const reason = new AppError(499, 'client_closed', 'test over');
    let ending = false;
    const calls = Array.from({ length: count }, () =>
      client
        .open({
          baseUrl: fake.baseUrl,
          path: '/chat/completions',
          auth: { authorization: 'Bearer sk-test' },
          contentType: 'application/json',
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }),
        })
        .then((answer) => {
          assert.equal(answer.kind, 'stream');
          const stream = answer as UpstreamStream;
          opened.push(stream);
          // A call that waited for a connection is ended as soon as it opens, freeing the next.
          if (ending) stream.abort(reason);
        }),
    );
    const deadline = Date.now() + 15_000;
    while (opened.length < awaited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, settleMs));
    const counted = opened.length;
    ending = true;
    for (const s of opened) s.abort(reason);
    await Promise.all(calls);
    return counted;
  }

  it('opens every concurrent stream at once by default, past the 256 a fixed pool allowed', async () => {
    const client = new UpstreamClient({ timeoutMs: 60_000 });
    try {
      assert.equal(await openStreams(client, 300, 300, 0), 300);
    } finally {
      await client.close();
    }
  });

  it('holds the streams past GATELOG_UPSTREAM_MAX_CONNECTIONS until a connection is free', async () => {
    const client = new UpstreamClient({ timeoutMs: 60_000, maxConnections: 3 });
    try {
      assert.equal(await openStreams(client, 5, 3, 1_000), 3);
    } finally {
      await client.close();
    }
  });
});
