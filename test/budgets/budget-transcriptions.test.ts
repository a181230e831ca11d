/**
 * Budgets on transcriptions (docs/api.md "Budgets"), through the official openai client: a transcription
 * reserves what its audio's length costs, read from the file before the call is admitted; a file whose
 * length cannot be read is refused under a budget (403 cost_unknown) unless the budget allows unpriced
 * calls. Priced so that the numbers are plain: whisper-1 at $60 a minute, a dollar a second; the fixture
 * lasts 1.26 s, so it reserves 2 whole seconds, and the fake provider counts 2 seconds of usage.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { api } from '../support/harness.js';
import { AUDIO_FIXTURES, audioPath } from '../support/audio.js';
import { type ProxyTestApp, startProxyApp } from '../support/proxy-app.js';

const WAV = AUDIO_FIXTURES.find((f) => f.file === 'hello.wav')!;
/** An MP3 by its first bytes (an ID3 tag), with no frame after it: its length cannot be read. */
const UNREADABLE = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0]), Buffer.alloc(4000, 0x55)]);

describe('budgets on transcriptions', () => {
  let p: ProxyTestApp;
  let pricing: string;

  before(async () => {
    pricing = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gatelog-budget-audio-')), 'pricing.json');
    fs.writeFileSync(pricing, JSON.stringify({ 'whisper-1': { per_minute: 60 } }));
    p = await startProxyApp({ GATELOG_PRICING_FILE: pricing });
  });
  after(async () => {
    await p?.close();
    fs.rmSync(path.dirname(pricing), { recursive: true, force: true });
  });

  /** A key of its own (scope models), and a total budget on it of `amount`. */
  const budgetedKey = async (name: string, amount: number, extra: Record<string, unknown> = {}) => {
    const key = await api(p.t.baseUrl, 'POST', '/api/keys/', { key: p.a.key, body: { name, scopes: ['models'] } });
    assert.equal(key.status, 201, key.text);
    const budget = await api(p.t.baseUrl, 'POST', '/api/budgets/', {
      key: p.a.key,
      body: { name, applies_to: { type: 'key', value: key.body.id }, amount_usd: amount, period: 'total', ...extra },
    });
    assert.equal(budget.status, 201, budget.text);
    const client = new OpenAI({ apiKey: key.body.key, baseURL: `${p.t.baseUrl}/api`, maxRetries: 0 });
    return { client, budgetId: budget.body.id as string };
  };
  const spent = async (budgetId: string) => {
    for (;;) {
      await p.t.flush();
      await p.t.budgets.settled();
      const res = await api(p.t.baseUrl, 'GET', `/api/budgets/${budgetId}/`, { key: p.a.key });
      if (res.body.reserved_usd === 0) return res.body.spent_usd as number;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const transcribe = async (client: OpenAI, file: Buffer, name: string) =>
    client.audio.transcriptions.create({ file: await toFile(file, name), model: 'whisper-1' }).then(
      () => 'passed',
      (err: unknown) => (err instanceof OpenAI.APIError ? `${err.status} ${err.code}` : String(err)),
    );

  it("reserves the audio's cost: a budget that holds one call's length refuses the second", async () => {
    const { client, budgetId } = await budgetedKey('one file', 3);
    const wav = fs.readFileSync(audioPath(WAV.file));
    const asked = p.fake.requests.length;
    assert.equal(await transcribe(client, wav, WAV.file), 'passed');
    assert.equal(await spent(budgetId), 2, 'charged the seconds the provider counted');
    // $1 left, and the file may cost $2: refused before anything is sent.
    assert.equal(await transcribe(client, wav, WAV.file), '402 budget_exceeded');
    assert.equal(p.fake.requests.length, asked + 1, 'the refused call reached no provider');
  });

  it('refuses a file whose length cannot be read, unless the budget allows unpriced calls', async () => {
    const strict = await budgetedKey('strict', 100);
    const refused = await strict.client.audio.transcriptions
      .create({ file: await toFile(UNREADABLE, 'speech.mp3'), model: 'whisper-1' })
      .catch((err: unknown) => err);
    assert.ok(refused instanceof OpenAI.PermissionDeniedError, String(refused));
    assert.equal(refused.code, 'cost_unknown');
    assert.equal((refused.error as { param?: string }).param, 'file');
    assert.match(refused.message, /length of this audio file could not be read.*'strict'/);
    const lenient = await budgetedKey('lenient', 100, { allow_unpriced: true });
    assert.equal(await transcribe(lenient.client, UNREADABLE, 'speech.mp3'), 'passed');
    // Nothing reserved; once it ended, its cost is known (the provider counted 2 seconds) and charged.
    assert.equal(await spent(lenient.budgetId), 2);
  });
});
