import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../src/config.js';
import { loadPriceTable } from '../src/gateway/pricing.js';
import { api, startApp } from './support/harness.js';

function writeTemp(content: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-prices-')), 'prices.json');
  fs.writeFileSync(file, content);
  return file;
}

describe('the price table', () => {
  it('prices the built-in models per CONTRACT §11', () => {
    const prices = loadPriceTable(null);
    assert.equal(prices.cost({ model: 'text-embedding-3-small', promptTokens: 1_000_000, completionTokens: 0 }), 0.02);
    assert.equal(prices.cost({ model: 'text-embedding-3-large', promptTokens: 1_000_000, completionTokens: 0 }), 0.13);
    assert.equal(prices.cost({ model: 'text-embedding-ada-002', promptTokens: 3, completionTokens: 0 }), 3e-7);
    assert.equal(prices.cost({ model: 'whisper-1', promptTokens: 0, completionTokens: 0, audioSeconds: 90 }), 0.009);
    assert.equal(prices.cost({ model: 'unknown', promptTokens: 1000, completionTokens: 1000 }), 0);
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

  it('refuses a bad pricing file, naming the variable', () => {
    for (const content of ['not json', '{"m": {"input_per_million": -1}}', '{"m": {"per_token": 1}}']) {
      assert.throws(
        () => loadPriceTable(writeTemp(content)),
        (err: unknown) => err instanceof ConfigError && err.variable === 'GATELOG_PRICING_FILE',
      );
    }
  });
});
