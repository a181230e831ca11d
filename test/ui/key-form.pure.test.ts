/**
 * The Keys page's pure pieces: the form's values as the body that makes a key and as the change of one
 * (only what changed), the scopes and grace periods the server knows, the list's order and texts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_GRACE_SECONDS } from '../../src/auth/api-keys.js';
import { SCOPES as SERVER_SCOPES } from '../../src/auth/scopes.js';
import {
  asTest,
  changeOf,
  createBody,
  emptyForm,
  expiresAtOf,
  formOf,
  GRACE_CHOICES,
  type KeyFields,
  localInput,
  parseModelList,
  SCOPES,
} from '../../ui/src/lib/key-form.js';
import { agoText, keyState, type ListedKey, shownKeys, sortKeys } from '../../ui/src/lib/key-list.js';

const key = (over: Partial<ListedKey> = {}): ListedKey => ({
  id: 'k1',
  name: 'ci',
  is_test: false,
  owner: { email: 'ci@acme.test' },
  scopes: ['models', 'read'],
  allowed_models: ['gpt-4o', 'claude-*'],
  expires_at: null,
  created_at: '2026-11-01T00:00:00.000Z',
  last_used_at: null,
  revoked_at: null,
  ...over,
});

describe('the key form', () => {
  it('knows the scopes and grace periods the server does', () => {
    assert.deepEqual([...SCOPES], [...SERVER_SCOPES]);
    assert.deepEqual(
      GRACE_CHOICES.map((c) => c.seconds),
      [0, 3600, 86_400, MAX_GRACE_SECONDS],
    );
  });

  it('makes the body of a new key: models one a line or comma-separated, blank as none', () => {
    const values = {
      ...emptyForm(),
      name: ' ci ',
      email: 'ci@acme.test',
      models: 'gpt-4o, claude-*\n\n openai/* ',
    };
    assert.deepEqual(createBody(values), {
      name: 'ci',
      is_test: false,
      owner: { email: 'ci@acme.test' },
      scopes: ['models', 'ingest', 'read', 'admin'],
      allowed_models: ['gpt-4o', 'claude-*', 'openai/*'],
      expires_at: null,
    });
    assert.deepEqual(parseModelList(' , \n'), []);
    assert.deepEqual(asTest(values, true).scopes, ['models', 'ingest', 'read'], 'a test key never holds admin');
    assert.equal(expiresAtOf('  '), null);
    assert.equal(expiresAtOf('soon'), 'soon');
    const local = '2030-01-02T03:04';
    assert.equal(localInput(expiresAtOf(local)), local, 'a typed expiry reads back the same');
  });

  it('sends only what changed of a key: nothing when nothing did, an untouched expiry never', () => {
    const expired: KeyFields = key({ expires_at: '2020-01-01T00:00:00.000Z' });
    const values = formOf(expired);
    assert.deepEqual(changeOf(expired, values), {});
    assert.deepEqual(changeOf(expired, { ...values, scopes: ['models', 'ingest', 'read'] }), {
      scopes: ['models', 'ingest', 'read'],
    });
    assert.deepEqual(changeOf(expired, { ...values, expires: '' }), {
      expires_at: null,
    });
    assert.deepEqual(changeOf(expired, { ...values, name: 'ci-2', models: 'gpt-4o' }), {
      name: 'ci-2',
      allowed_models: ['gpt-4o'],
    });
  });
});

describe('the key list', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  const keys = [
    key({ id: 'old', name: 'b', created_at: '2026-10-01T00:00:00Z', last_used_at: '2026-11-29T11:59:30Z' }),
    key({ id: 'new', name: 'a', created_at: '2026-11-20T00:00:00Z' }),
    key({ id: 'gone', name: 'c', created_at: '2026-11-10T00:00:00Z', revoked_at: '2026-11-11T00:00:00Z' }),
    key({ id: 'used', name: 'd', created_at: '2026-09-01T00:00:00Z', last_used_at: '2026-11-28T00:00:00Z' }),
  ];
  const ids = (list: ListedKey[]) => list.map((k) => k.id);

  it('puts the newest use first (never used last, newest made first), or the newest made, or by name', () => {
    assert.deepEqual(ids(sortKeys(keys, 'used')), ['old', 'used', 'new', 'gone']);
    assert.deepEqual(ids(sortKeys(keys, 'created')), ['new', 'gone', 'old', 'used']);
    assert.deepEqual(ids(sortKeys(keys, 'name')), ['new', 'old', 'gone', 'used']);
    assert.deepEqual(ids(shownKeys(keys, false)), ['old', 'new', 'used']);
    assert.equal(shownKeys(keys, true).length, 4);
  });

  it("says each key's state and how long ago", () => {
    assert.equal(keyState(keys[2], now), 'revoked');
    assert.equal(keyState(key({ expires_at: '2026-11-29T11:00:00Z' }), now), 'expired');
    assert.equal(keyState(keys[0], now), 'active');
    assert.equal(agoText('2026-11-29T11:59:30Z', now), 'just now');
    assert.equal(agoText('2026-11-29T11:55:00Z', now), '5 min ago');
    assert.equal(agoText('2026-11-29T09:00:00Z', now), '3 h ago');
    assert.equal(agoText('2026-11-28T11:00:00Z', now), '1 day ago');
    assert.equal(agoText('2026-11-25T11:00:00Z', now), '4 days ago');
    assert.equal(agoText('2026-12-03T12:00:00Z', now), 'in 4 days');
  });
});
