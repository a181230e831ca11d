import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config.js';
import { loadPriceTable } from '../../src/logs/pricing/price-table.js';
import { api, startApp } from '../support/harness.js';

function writeTemp(content: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-prices-')), 'prices.json');
  fs.writeFileSync(file, content);
  return file;
}

describe('the price table', () => {
  it('prices embedding and transcription models from the catalog', () => {
    const prices = loadPriceTable(null);
    assert.equal(prices.cost({ model: 'text-embedding-3-small', promptTokens: 1_000_000, completionTokens: 0 }), 0.02);
    assert.equal(prices.cost({ model: 'text-embedding-3-large', promptTokens: 1_000_000, completionTokens: 0 }), 0.13);
    assert.equal(prices.cost({ model: 'text-embedding-ada-002', promptTokens: 3, completionTokens: 0 }), 3e-7);
    assert.equal(prices.cost({ model: 'whisper-1', promptTokens: 0, completionTokens: 0, audioSeconds: 90 }), 0.009);
  });

  it('prices chat and completion models of several providers from the catalog', () => {
    const prices = loadPriceTable(null);
    const million = { promptTokens: 1_000_000, completionTokens: 1_000_000 };
    // gpt-4o: $2.50 in, $10 out per million tokens; gpt-3.5-turbo: $0.50 and $1.50.
    assert.equal(prices.cost({ model: 'gpt-4o', ...million }), 12.5);
    assert.equal(prices.cost({ model: 'gpt-4o-mini', promptTokens: 1000, completionTokens: 500 }), 0.00045);
    assert.equal(prices.cost({ model: 'gpt-3.5-turbo', ...million }), 2);
    assert.equal((prices.cost({ model: 'gpt-3.5-turbo-instruct', ...million }) ?? 0) > 0, true);
    // Another provider's model, by its name alone and with the log's provider_id.
    assert.equal(prices.cost({ model: 'claude-3-5-sonnet-20241022', ...million }), 18);
    assert.equal(prices.cost({ model: 'claude-3-5-sonnet-20241022', providerId: 'anthropic', ...million }), 18);
    // A provider_id the catalog does not know does not hide the model's price.
    assert.equal(prices.cost({ model: 'gpt-4o', providerId: 'my-proxy', ...million }), 12.5);
    // The second lookup of a model is remembered and gives the same answer.
    assert.equal(prices.cost({ model: 'gpt-4o', ...million }), 12.5);
  });

  it('costs models whose price is tiered or depends on the time through the catalog', () => {
    const prices = loadPriceTable(null);
    // gemini-1.5-pro's price per token is higher past 128k prompt tokens: 1,000× the prompt costs more than 1,000×.
    const small = prices.cost({
      model: 'gemini-1.5-pro',
      providerId: 'google',
      promptTokens: 100_000,
      completionTokens: 0,
    });
    const large = prices.cost({
      model: 'gemini-1.5-pro',
      providerId: 'google',
      promptTokens: 200_000,
      completionTokens: 0,
    });
    assert.ok(small !== null && large !== null && small > 0, `small ${small}`);
    assert.ok(large > 2 * small, `large ${large} vs small ${small}`);
  });

  it('knows no cost for an unknown model (null, never 0) and reports it once', () => {
    const prices = loadPriceTable(null);
    const reported: string[] = [];
    prices.onUnpriced = (model) => reported.push(model);
    assert.equal(prices.cost({ model: 'unknown', promptTokens: 1000, completionTokens: 1000 }), null);
    assert.equal(prices.cost({ model: 'unknown', promptTokens: 1000, completionTokens: 1000 }), null);
    assert.equal(prices.cost({ model: 'constructor', promptTokens: 1000, completionTokens: 1000 }), null);
    // Nothing to price is known to cost nothing: no model (a span), or no tokens at all.
    assert.equal(prices.cost({ model: '', promptTokens: 1000, completionTokens: 1000 }), 0);
    assert.equal(prices.cost({ model: 'unknown', promptTokens: 0, completionTokens: 0 }), 0);
    assert.deepEqual(reported, ['unknown', 'constructor']);
  });

  it('takes overrides and additions from GATELOG_PRICING_FILE', async () => {
    const file = writeTemp(
      JSON.stringify({
        'text-embedding-3-small': { input_per_million: 1 },
        'my-chat': { input_per_million: 2, output_per_million: 4 },
      }),
    );
    const prices = loadPriceTable(file);
    assert.equal(prices.cost({ model: 'text-embedding-3-small', promptTokens: 1_000_000, completionTokens: 0 }), 1);
    assert.equal(prices.cost({ model: 'my-chat', promptTokens: 500_000, completionTokens: 250_000 }), 2);
    assert.equal(prices.cost({ model: 'text-embedding-3-large', promptTokens: 1_000_000, completionTokens: 0 }), 0.13);

    const t = await startApp({ env: { GATELOG_PRICING_FILE: file } });
    try {
      const { key } = await t.tenant();
      const res = await api(t.baseUrl, 'POST', '/api/request-logs/create/', {
        key,
        body: { model: 'my-chat', prompt_tokens: 1000, completion_tokens: 1000 },
      });
      await t.flush();
      const item = await api(t.baseUrl, 'GET', `/api/request-logs/${res.body.unique_id}/`, { key });
      assert.equal(item.body.cost, 0.006);
    } finally {
      await t.close();
    }
  });

  it("prices Anthropic's cache reads and cache writes each at its own price, from the catalog or the file", () => {
    // 1,000 uncached input tokens, 3,000 read from the cache, 2,000 written to it, 500 out.
    const usage = { promptTokens: 6000, cachedTokens: 3000, cacheWriteTokens: 2000, completionTokens: 500 };
    // Of the writes, 500 to the one-hour cache.
    const hour = { ...usage, cacheWrite1hTokens: 500 };
    // Claude Sonnet 4: $3 in, $0.30 cache reads, $3.75 cache writes, $15 out per million tokens.
    const catalog = loadPriceTable(null);
    assert.equal(catalog.cost({ model: 'claude-sonnet-4-20250514', providerId: 'anthropic', ...usage }), 0.0189);
    // Sonnet 4.5's prices are tiered by the prompt's size: priced by the catalog's own rules, the same below 200k.
    assert.equal(catalog.cost({ model: 'claude-sonnet-4-5-20250929', providerId: 'anthropic', ...usage }), 0.0189);
    // A write to the one-hour cache costs $6 per million rather than $3.75.
    for (const model of ['claude-sonnet-4-20250514', 'claude-sonnet-4-5-20250929']) {
      assert.equal(catalog.cost({ model, providerId: 'anthropic', ...hour }), 0.0189 + (500 * (6 - 3.75)) / 1e6);
    }
    const file = writeTemp(
      JSON.stringify({
        'my-claude': {
          input_per_million: 1,
          cached_input_per_million: 0.1,
          cache_write_input_per_million: 2,
          cache_write_1h_input_per_million: 3,
          output_per_million: 4,
        },
        'my-plain': { input_per_million: 1, output_per_million: 4 },
      }),
    );
    const prices = loadPriceTable(file);
    assert.equal(prices.cost({ model: 'my-claude', ...usage }), (1000 * 1 + 3000 * 0.1 + 2000 * 2 + 500 * 4) / 1e6);
    assert.equal(
      prices.cost({ model: 'my-claude', ...hour }),
      (1000 * 1 + 3000 * 0.1 + 1500 * 2 + 500 * 3 + 500 * 4) / 1e6,
    );
    // Without their own prices, cached tokens cost what any input token does.
    assert.equal(prices.cost({ model: 'my-plain', ...usage }), (6000 * 1 + 500 * 4) / 1e6);
  });

  it('refuses a bad pricing file, naming the variable', () => {
    for (const content of ['not json', '{"m": {"input_per_million": -1}}', '{"m": {"per_token": 1}}']) {
      assert.throws(
        () => loadPriceTable(writeTemp(content)),
        (err: unknown) => err instanceof ConfigError && err.variable === 'GATELOG_PRICING_FILE',
      );
    }
  });
});
