/**
 * The model lists (GET /api/models, /v1/models, /api/anthropic/v1/models) through the official clients:
 * which models a key may call — providers' own names and patterns, the built-in families from the price
 * catalog, routed as a call would be, within allowed_models — each with its provider and the catalog's
 * prices; Anthropic's paging; who may list.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { findProvider, type ModelInfo } from '@pydantic/genai-prices';
import OpenAI from 'openai';
import { BUILT_IN_PROVIDER_KINDS } from '../../src/providers/registry.js';
import { api, startApp, type Tenant, type TestApp } from '../support/harness.js';
import { registerProviderKey } from '../support/proxy-app.js';

interface Pricing {
  input: number | null;
  output: number | null;
  cache_read: number | null;
  cache_write: number | null;
}
/** An entry of either list with gatelog's fields. */
interface Listed {
  id: string;
  provider: string;
  pricing: Pricing;
}

/** An own server's address: nothing is called, the lists are gatelog's. */
const NOWHERE = 'http://127.0.0.1:9/v1';
/** Priced by the pricing file, which the catalog does not know. */
const OWN_MODEL = 'my-llama-3';
const OWN_PRICE = { input_per_million: 0.1, output_per_million: 0.2 };

/** The price catalog's models of one of its providers, as it ships them. */
function catalogModels(providerId: string): ModelInfo[] {
  const provider = findProvider({ providerId });
  assert.ok(provider && provider.id === providerId, `the catalog has ${providerId}`);
  return provider.models.filter((m) => m.deprecated !== true);
}

function catalogModel(providerId: string, id: string): ModelInfo {
  const model = catalogModels(providerId).find((m) => m.id === id);
  assert.ok(model, `${providerId} ${id} in the catalog`);
  return model;
}

/** The catalog's token prices of a model with one price (a tiered one at its base), per million tokens. */
function catalogPricing(model: ModelInfo): Pricing {
  assert.ok(!Array.isArray(model.prices), `${model.id} has one price`);
  const prices = model.prices;
  const at = (key: string): number | null => {
    const value = prices[key];
    return typeof value === 'number' ? value : (value?.base ?? null);
  };
  return {
    input: at('input_mtok'),
    output: at('output_mtok'),
    cache_read: at('cache_read_mtok'),
    cache_write: at('cache_write_mtok'),
  };
}

/** A kind's family models the catalog lists (fine-tuned models' price classes are no model's name). */
function familyModels(kind: string): string[] {
  const families = BUILT_IN_PROVIDER_KINDS.get(kind)?.families ?? [];
  return catalogModels(kind)
    .map((m) => m.id)
    .filter((id) => families.some((f) => f.test(id)) && !/^ft:|\.ft-/.test(id));
}

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('the model lists', () => {
  let t: TestApp;
  let a: Tenant;
  let pricingDir: string;
  /** The Anthropic catalog's models, in its order: the Anthropic list, page by page. */
  let claude: string[];
  let openAIList: OpenAI;
  let anthropicList: Anthropic;

  let made = 0;
  const keyWith = async (body: Record<string, unknown>): Promise<string> => {
    made += 1;
    const res = await api(t.baseUrl, 'POST', '/api/keys/', { key: a.key, body: { name: `lists-${made}`, ...body } });
    assert.equal(res.status, 201, res.text);
    return res.body.key as string;
  };
  const openAI = (key: string, base = '/v1') =>
    new OpenAI({ apiKey: key, baseURL: `${t.baseUrl}${base}`, maxRetries: 0 });
  const anthropic = (key: string, base = '/api/anthropic') =>
    new Anthropic({ apiKey: key, baseURL: `${t.baseUrl}${base}`, maxRetries: 0 });
  const allOf = async <T>(pages: AsyncIterable<T>): Promise<T[]> => {
    const items: T[] = [];
    for await (const item of pages) items.push(item);
    return items;
  };

  before(async () => {
    pricingDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-model-lists-'));
    const pricingFile = path.join(pricingDir, 'prices.json');
    fs.writeFileSync(pricingFile, JSON.stringify({ [OWN_MODEL]: OWN_PRICE }));
    t = await startApp({ env: { GATELOG_PRICING_FILE: pricingFile } });
    a = await t.tenant();
    // Registered one after the other: the lists follow this order.
    await registerProviderKey(t, a.key, { provider: 'openai', api_key: 'sk-openai-list-key-1234' });
    await registerProviderKey(t, a.key, { provider: 'anthropic', api_key: 'sk-ant-list-key-1234' });
    // llama-3.3* is expanded from the catalog's groq models; openai/gpt-oss-120b alone names the openai
    // provider (as `provider/model`), so groq's is listed as groq/openai/gpt-oss-120b.
    await registerProviderKey(t, a.key, {
      provider: 'groq',
      api_key: 'gsk-list-key-1234',
      base_url: NOWHERE,
      models: ['llama-3.3*', 'openai/gpt-oss-120b'],
    });
    // An own server claiming gpt-4o: OpenAI's is then reached as openai/gpt-4o.
    await registerProviderKey(t, a.key, {
      provider: 'local',
      api_key: 'sk-local-list-key-1234',
      base_url: NOWHERE,
      models: [OWN_MODEL, 'gpt-4o'],
    });
    claude = catalogModels('anthropic').map((m) => m.id);
    openAIList = openAI(a.key);
    anthropicList = anthropic(a.key);
  });
  after(async () => {
    await t.close();
    fs.rmSync(pricingDir, { recursive: true, force: true });
  });

  it("lists every model the key may call in OpenAI's list, each with its provider", async () => {
    const page = await openAIList.models.list();
    const data = page.data as unknown as (OpenAI.Models.Model & Listed)[];
    const openaiModels = familyModels('openai').map((id) => (id === 'gpt-4o' ? 'openai/gpt-4o' : id));
    const groq = catalogModels('groq')
      .map((m) => m.id)
      .filter((id) => id.startsWith('llama-3.3'));
    assert.ok(openaiModels.includes('openai/gpt-4o') && groq.length > 0 && claude.length > 0);
    const expected = [...openaiModels, ...claude, ...groq, 'groq/openai/gpt-oss-120b', OWN_MODEL, 'gpt-4o'];
    assert.deepEqual(sorted(data.map((m) => m.id)), sorted(expected));
    assert.equal(new Set(data.map((m) => m.id)).size, data.length, 'each name once');

    const providerOf = new Map(data.map((m) => [m.id, m.provider]));
    for (const id of openaiModels) assert.equal(providerOf.get(id), 'openai', id);
    for (const id of claude) assert.equal(providerOf.get(id), 'anthropic', id);
    for (const id of [...groq, 'groq/openai/gpt-oss-120b']) assert.equal(providerOf.get(id), 'groq', id);
    for (const id of [OWN_MODEL, 'gpt-4o']) assert.equal(providerOf.get(id), 'local', id);

    // OpenAI's fields: the provider owns it, created when the provider was registered.
    const registered = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key: a.key });
    const createdAt = new Map<string, number>(
      (registered.body.results as { provider: string; created_at: string }[]).map((p) => [
        p.provider,
        Math.floor(Date.parse(p.created_at) / 1000),
      ]),
    );
    for (const m of data) {
      assert.equal(m.object, 'model');
      assert.equal(m.owned_by, m.provider);
      assert.equal(m.created, createdAt.get(m.provider), m.id);
    }
    // The same list under /api/ (the documented base URL).
    const documented = await openAI(a.key, '/api').models.list();
    assert.deepEqual(documented.data, page.data);
  });

  it("gives each model the catalog's prices per million tokens, null where it has none", async () => {
    const data = (await openAIList.models.list()).data as unknown as Listed[];
    const pricing = new Map(data.map((m) => [m.id, m.pricing]));
    // Catalog prices are per million tokens already: listed as the catalog writes them (0.15, not 0.15000000000000002).
    for (const [id, provider, model] of [
      ['gpt-4o-mini', 'openai', 'gpt-4o-mini'],
      ['openai/gpt-4o', 'openai', 'gpt-4o'],
      ['claude-haiku-4-5', 'anthropic', 'claude-haiku-4-5'],
      // A price that rises past 200k prompt tokens: its base.
      ['claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5'],
      ['groq/openai/gpt-oss-120b', 'groq', 'openai/gpt-oss-120b'],
    ] as const) {
      const expected = catalogPricing(catalogModel(provider, model));
      assert.ok(expected.input !== null && expected.output !== null, `${id} is priced`);
      assert.deepEqual(pricing.get(id), expected, id);
    }
    assert.ok(pricing.get('claude-haiku-4-5')?.cache_write, "Anthropic's cache writes have a price of their own");
    assert.equal(pricing.get('gpt-4o-mini')?.cache_write, null, "OpenAI's cache writes have no price of their own");
    // The own server's gpt-4o is costed as the catalog prices gpt-4o; its own model by the pricing file.
    assert.deepEqual(pricing.get('gpt-4o'), pricing.get('openai/gpt-4o'));
    assert.deepEqual(pricing.get(OWN_MODEL), {
      input: OWN_PRICE.input_per_million,
      output: OWN_PRICE.output_per_million,
      cache_read: null,
      cache_write: null,
    });
  });

  it("lists the models of Anthropic providers in Anthropic's page, for Anthropic's client", async () => {
    const models = await allOf(anthropicList.models.list());
    assert.deepEqual(
      models.map((m) => m.id),
      claude,
    );
    const registered = await api(t.baseUrl, 'GET', '/api/provider-keys/', { key: a.key });
    const anthropicProvider = (registered.body.results as { provider: string; created_at: string }[]).find(
      (p) => p.provider === 'anthropic',
    );
    for (const m of models as unknown as (Anthropic.Models.ModelInfo & Listed)[]) {
      const catalog = catalogModel('anthropic', m.id);
      assert.equal(m.type, 'model');
      assert.equal(m.display_name, catalog.name ?? m.id);
      assert.equal(m.created_at, anthropicProvider?.created_at);
      assert.equal(m.provider, 'anthropic');
    }
    const haiku = models.find((m) => m.id === 'claude-haiku-4-5') as unknown as Listed;
    assert.deepEqual(haiku.pricing, catalogPricing(catalogModel('anthropic', 'claude-haiku-4-5')));

    // The same page at /v1/anthropic/v1/models, and at /v1/models for Anthropic's client pointed at
    // gatelog's root (it sends anthropic-version; OpenAI's client at the same path gets OpenAI's list).
    for (const base of ['/v1/anthropic', '']) {
      const page = await anthropic(a.key, base).models.list({ limit: 1000 });
      assert.deepEqual(
        page.data.map((m) => m.id),
        claude,
        base,
      );
      assert.equal(page.has_more, false);
    }
  });

  it('pages as Anthropic does: limit, after_id, before_id, has_more, first_id and last_id', async () => {
    assert.ok(claude.length >= 8, `${claude.length} Claude models`);
    const n = claude.length;
    const first = await anthropicList.models.list({ limit: 3 });
    assert.deepEqual(
      first.data.map((m) => m.id),
      claude.slice(0, 3),
    );
    assert.equal(first.has_more, true);
    assert.equal(first.first_id, claude[0]);
    assert.equal(first.last_id, claude[2]);

    const next = await first.getNextPage();
    assert.deepEqual(
      next.data.map((m) => m.id),
      claude.slice(3, 6),
    );
    const after = await anthropicList.models.list({ limit: 3, after_id: claude[2] });
    assert.deepEqual(after.data, next.data);
    assert.equal(after.first_id, claude[3]);
    assert.equal(after.last_id, claude[5]);

    const tail = await anthropicList.models.list({ limit: 5, after_id: claude[n - 3] });
    assert.deepEqual(
      tail.data.map((m) => m.id),
      claude.slice(n - 2),
    );
    assert.equal(tail.has_more, false);
    const end = await anthropicList.models.list({ after_id: claude[n - 1] });
    assert.deepEqual(end.data, []);
    assert.equal(end.has_more, false);
    assert.equal(end.first_id, null);
    assert.equal(end.last_id, null);

    const before = await anthropicList.models.list({ limit: 2, before_id: claude[5] });
    assert.deepEqual(
      before.data.map((m) => m.id),
      claude.slice(3, 5),
    );
    assert.equal(before.has_more, true);
    const start = await anthropicList.models.list({ limit: 5, before_id: claude[1] });
    assert.deepEqual(
      start.data.map((m) => m.id),
      [claude[0]],
    );
    assert.equal(start.has_more, false);

    // The client walks every page after the first by its last_id.
    const walked = await allOf(anthropicList.models.list({ limit: 4 }));
    assert.deepEqual(
      walked.map((m) => m.id),
      claude,
    );
  });

  it('refuses a page it cannot give with a 400 naming the parameter', async () => {
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=ten', 'limit'],
      ['after_id=claude-none', 'after_id'],
      ['before_id=claude-none', 'before_id'],
      [`after_id=${claude[0]}&before_id=${claude[2]}`, 'before_id'],
    ]) {
      const res = await api(t.baseUrl, 'GET', `/api/anthropic/v1/models?${query}`, { key: a.key });
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.error.param, param, query);
      assert.equal(res.body.error.code, 'invalid_parameter', query);
    }
    await assert.rejects(anthropicList.models.list({ after_id: 'claude-none' }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.BadRequestError, String(err));
      return true;
    });
  });

  it("lists only what a key's allowed_models allow, as its calls are checked", async () => {
    const narrow = await keyWith({ scopes: ['models'], allowed_models: ['claude-haiku*', OWN_MODEL, 'gpt-4o'] });
    const listed = (await openAI(narrow).models.list()).data.map((m) => m.id);
    const haikus = claude.filter((id) => id.startsWith('claude-haiku'));
    assert.ok(haikus.length > 0);
    // gpt-4o is the own server's; OpenAI's, called as openai/gpt-4o, is outside the list.
    assert.deepEqual(sorted(listed), sorted([...haikus, OWN_MODEL, 'gpt-4o']));
    assert.deepEqual(
      (await allOf(anthropic(narrow).models.list())).map((m) => m.id),
      haikus,
    );

    const oneProvider = await keyWith({ scopes: ['models'], allowed_models: ['groq/*'] });
    const groq = (await openAI(oneProvider).models.list()).data as unknown as Listed[];
    assert.ok(groq.length > 1);
    assert.ok(
      groq.every((m) => m.provider === 'groq'),
      JSON.stringify(groq.map((m) => m.id)),
    );
    const page = await anthropic(oneProvider).models.list();
    assert.deepEqual([page.data, page.has_more, page.first_id, page.last_id], [[], false, null, null]);
  });

  it("names the base URL to use to OpenAI's client pointed at gatelog's root", async () => {
    await assert.rejects(openAI(a.key, '').models.list(), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      assert.equal(err.code, 'wrong_base_url');
      assert.ok(err.message.includes(`${t.baseUrl}/v1`), err.message);
      return true;
    });
  });

  it('lists nothing for an organization without providers', async () => {
    const b = await t.tenant();
    assert.deepEqual((await openAI(b.key).models.list()).data, []);
    assert.deepEqual((await anthropic(b.key).models.list()).data, []);
  });

  it('refuses a key without the models scope with a 403', async () => {
    const reader = await keyWith({ scopes: ['read'] });
    await assert.rejects(openAI(reader).models.list(), (err: unknown) => {
      assert.ok(err instanceof OpenAI.PermissionDeniedError, String(err));
      assert.match(err.message, /'models' scope/);
      return true;
    });
    await assert.rejects(anthropic(reader).models.list(), (err: unknown) => {
      assert.ok(err instanceof Anthropic.PermissionDeniedError, String(err));
      return true;
    });
  });
});
