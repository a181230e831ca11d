/**
 * A chat completion served by Claude is priced as Anthropic's own route prices the same answer: of the
 * tokens written to the prompt cache, those written for an hour (`cache_creation.ephemeral_1h_input_tokens`)
 * at the one-hour price, the rest at the five-minute price — JSON and streamed, in the log and in
 * request_breakdown. The official openai client, gatelog translating to the fake Anthropic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import type { FakeAnthropic } from '../support/fake-anthropic.js';
import { logNamedBy, logWhenWritten, type ProxyTestApp, startClaudeProxyApp } from '../support/proxy-app.js';
import { closeInOrder } from '../support/harness.js';
import { SONNET, ONE_HOUR_CACHE_USAGE, ONE_HOUR_CACHE_COST } from '../support/claude-prices.js';

const FIVE_MINUTE_PRICE =
  (1000 * SONNET.input + 3000 * SONNET.cacheRead + 2000 * SONNET.cacheWrite + 500 * SONNET.output) / 1e6;

const near = (actual: unknown, expected: number, what: string) =>
  assert.ok(
    typeof actual === 'number' && Math.abs(actual - expected) < 1e-9,
    `${what}: ${String(actual)} vs ${expected} (five-minute price: ${FIVE_MINUTE_PRICE})`,
  );

describe("one-hour cache writes of a chat completion served by Claude, at Anthropic's one-hour price", () => {
  let p: ProxyTestApp;
  let claude: FakeAnthropic;
  const messages = [{ role: 'user' as const, content: 'Hello' }];

  before(async () => ({ p, claude } = await startClaudeProxyApp()));
  after(() => closeInOrder(p, claude));

  // Claude Sonnet 4 has one price; 4.5's is tiered by the prompt's size (priced by the catalog's own rules).
  for (const model of ['claude-sonnet-4-20250514', 'claude-sonnet-4-5-20250929']) {
    it(`prices the JSON answer's one-hour writes at their own price (${model})`, async () => {
      claude.message({ usage: ONE_HOUR_CACHE_USAGE, model });
      const body = { model: 'claude-sonnet-4-5', messages, max_tokens: 600, request_breakdown: true };
      const { data, response } = await p.client.chat.completions
        .create(body as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      assert.equal(data.usage?.prompt_tokens, 6000);
      assert.equal(data.usage?.prompt_tokens_details?.cached_tokens, 3000);
      near(
        (data as unknown as { request_breakdown: { cost: unknown } }).request_breakdown.cost,
        ONE_HOUR_CACHE_COST,
        'breakdown',
      );
      const log = await logNamedBy(p, response.headers.get('x-gatelog-log-id'));
      assert.equal(log.model, model);
      assert.equal(log.prompt_tokens, 6000);
      assert.equal(log.completion_tokens, 500);
      near(log.cost, ONE_HOUR_CACHE_COST, 'log');
    });

    it(`prices the stream's one-hour writes at their own price, usage asked for or not (${model})`, async () => {
      for (const includeUsage of [false, true]) {
        claude.message({ usage: ONE_HOUR_CACHE_USAGE, model });
        const body = {
          model: 'claude-sonnet-4-5',
          messages,
          max_tokens: 600,
          stream: true,
          ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
          request_breakdown: true,
        };
        const { data: stream, response } = await p.client.chat.completions
          .create(body as OpenAI.ChatCompletionCreateParamsStreaming)
          .withResponse();
        let breakdown: { cost: unknown } | null = null;
        let usage: OpenAI.CompletionUsage | null = null;
        for await (const chunk of stream) {
          const choice = chunk.choices[0] as unknown as { request_breakdown?: { cost: unknown } } | undefined;
          if (choice?.request_breakdown) breakdown = choice.request_breakdown;
          if (chunk.usage) usage = chunk.usage;
        }
        const where = `include_usage ${includeUsage}`;
        assert.equal(usage?.prompt_tokens, includeUsage ? 6000 : undefined, where);
        assert.ok(breakdown, `${where}: request_breakdown sent`);
        near(breakdown.cost, ONE_HOUR_CACHE_COST, `${where}: breakdown`);
        // Recorded when the stream ends, which may follow the client's last chunk.
        const log = await logWhenWritten(p.t, p.a, response.headers.get('x-gatelog-log-id'));
        assert.equal(log.status_code, 200, where);
        assert.equal(log.prompt_tokens, 6000, where);
        assert.equal(log.completion_tokens, 500, where);
        near(log.cost, ONE_HOUR_CACHE_COST, `${where}: log`);
      }
    });
  }
});
