/**
 * `gatelog providers set` with --kind and --api-version, in a child process: an Azure OpenAI provider
 * registered from the CLI serves `gatelog serve`'s chat calls at its deployment URL with that
 * api-version and the key in `api-key`; a kind gatelog does not know, and an api-version for a provider
 * that is not Azure, are refused naming the option, and nothing is stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { assertGatelogFails, runGatelogJson, spawnServer, stopServers } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { servedEnv } from '../support/harness.js';

describe('an Azure provider registered from the CLI', () => {
  let database: TestDatabase;
  let fake: FakeUpstream;
  let env: Record<string, string>;
  const servers: Awaited<ReturnType<typeof spawnServer>>[] = [];

  before(async () => {
    database = await createTestDatabase();
    fake = await startFakeUpstream();
    // OpenAI's own upstream is nowhere: a call that reached the fake went by Azure's URL.
    env = servedEnv(database, { GATELOG_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  });
  after(async () => {
    await stopServers(servers);
    await fake?.close();
    await database?.drop();
  });

  const json = (args: string[]) => runGatelogJson(args, env);
  const fails = (args: string[], message: RegExp) => assertGatelogFails(args, env, message);

  it('answers a chat call at the deployment URL with the api-version set by --api-version', async () => {
    await json(['migrate']);
    await json(['orgs', 'create', 'azure-org']);
    const { key } = await json(['keys', 'create', '--org', 'azure-org', '--name', 'app']);
    const set = await json([
      'providers',
      'set',
      'contoso',
      '--org',
      'azure-org',
      '--kind',
      'azure',
      '--api-key',
      'azure-cli-key-00000001',
      '--base-url',
      new URL(fake.baseUrl).origin,
      '--api-version',
      '2024-06-01',
    ]);
    assert.equal(set.provider, 'contoso');
    assert.equal(set.kind, 'azure');
    assert.equal(set.api_version, '2024-06-01');
    assert.equal(set.base_url, new URL(fake.baseUrl).origin);

    const server = await spawnServer(env);
    servers.push(server);
    fake.chat({ model: 'gpt-4o-2024-08-06' });
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/api`, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'contoso/prod-gpt4o',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    assert.equal(answer.choices[0].message.content, 'Hello, world!');
    assert.equal(answer.model, 'gpt-4o-2024-08-06');
    assert.equal(fake.chats.length, 1);
    const sent = fake.chats[0].request;
    assert.equal(sent.url, '/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-06-01');
    assert.equal(sent.headers['api-key'], 'azure-cli-key-00000001');
    assert.equal(sent.headers.authorization, undefined, 'the key is not sent as a Bearer token');
  });

  it('refuses a kind it does not know and an api-version for a provider that is not Azure, naming the option', async () => {
    await json(['orgs', 'create', 'refused-org']);
    await fails(
      [
        'providers',
        'set',
        'bedrock',
        '--org',
        'refused-org',
        '--kind',
        'bedrock',
        '--api-key',
        'k-000000000001',
        '--base-url',
        'http://127.0.0.1:4012/v1',
      ],
      /--kind: .*bedrock/,
    );
    await fails(
      [
        'providers',
        'set',
        'groq',
        '--org',
        'refused-org',
        '--api-key',
        'gsk-000000000001',
        '--base-url',
        'http://127.0.0.1:4012/openai/v1',
        '--api-version',
        '2024-06-01',
      ],
      /--api-version: .*Azure/,
    );
    // The same for a provider whose kind is given as openai.
    await fails(
      [
        'providers',
        'set',
        'openai',
        '--org',
        'refused-org',
        '--kind',
        'openai',
        '--api-key',
        'sk-000000000001',
        '--api-version',
        '2024-06-01',
      ],
      /--api-version: .*Azure/,
    );
    assert.deepEqual(await json(['providers', 'list', '--org', 'refused-org']), { results: [] });
  });
});
