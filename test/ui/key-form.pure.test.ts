/**
 * The Keys page's pure pieces: the form's values as the body that makes a key and as the change of one
 * (only what changed), a typed rate limit checked before anything is sent, the scopes, grace periods and
 * highest limit the server knows, the list's order and texts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_GRACE_SECONDS } from '../../src/auth/api-keys.js';
import { MAX_PER_MINUTE as SERVER_MAX_PER_MINUTE } from '../../src/auth/key-controls.js';
import { SCOPES as SERVER_SCOPES } from '../../src/auth/scopes.js';
import {
  asTest,
  changeOf,
  createBody,
  emptyForm,
  expiresAtOf,
  formOf,
  formProblem,
  GRACE_CHOICES,
  type KeyFields,
  localInput,
  MAX_PER_MINUTE,
  parseModelList,
  perMinuteOf,
  SCOPES,
} from '../../ui/src/lib/key-form.js';
import {
  agoText,
  keyState,
  limitsText,
  type ListedKey,
  perMinuteText,
  shownKeys,
  sortKeys,
} from '../../ui/src/lib/key-list.js';

const key = (over: Partial<ListedKey> = {}): ListedKey => ({
  id: 'k1',
  name: 'ci',
  is_test: false,
  owner: { email: 'ci@acme.test' },
  scopes: ['models', 'read'],
  allowed_models: ['gpt-4o', 'claude-*'],
  expires_at: null,
  rate_limits: { requests_per_minute: null, tokens_per_minute: null },
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
    assert.equal(MAX_PER_MINUTE, SERVER_MAX_PER_MINUTE);
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

describe("the key form's rate limits", () => {
  it('reads a limit as a whole number from 1, or none when empty; says what is wrong with anything else', () => {
    assert.deepEqual(perMinuteOf(' 60 '), { value: 60 });
    assert.deepEqual(perMinuteOf(''), { value: null });
    assert.deepEqual(perMinuteOf(String(MAX_PER_MINUTE)), { value: MAX_PER_MINUTE });
    for (const typed of ['0', '1.5', '-3', 'ten', '1e3', '6 0']) {
      assert.ok('problem' in perMinuteOf(typed), `${typed} is refused`);
    }
    assert.match((perMinuteOf(String(MAX_PER_MINUTE + 1)) as { problem: string }).problem, /At most 1,000,000,000/);

    assert.equal(formProblem({ ...emptyForm(), rpm: '60', tpm: '100000' }), null);
    assert.deepEqual(formProblem({ ...emptyForm(), rpm: '60', tpm: '0' }), {
      param: 'rate_limits.tokens_per_minute',
      message: 'Tokens per minute: Give a whole number of at least 1, or leave it empty.',
    });
    assert.equal(formProblem({ ...emptyForm(), rpm: 'lots' })?.param, 'rate_limits.requests_per_minute');
  });

  it("makes a key without limits when both are empty (the maker's then apply), else with those typed", () => {
    assert.equal('rate_limits' in createBody({ ...emptyForm(), name: 'k' }), false, 'nothing sent');
    assert.deepEqual(createBody({ ...emptyForm(), name: 'k', rpm: '60', tpm: ' 100000 ' }).rate_limits, {
      requests_per_minute: 60,
      tokens_per_minute: 100_000,
    });
    assert.deepEqual(createBody({ ...emptyForm(), name: 'k', rpm: '60' }).rate_limits, { requests_per_minute: 60 });
    // Not a number reaches the API as typed, for it to refuse by name: never as "no limit".
    assert.deepEqual(createBody({ ...emptyForm(), name: 'k', tpm: 'ten' }).rate_limits, { tokens_per_minute: 'ten' });
  });

  it("changes a key's limits whole when one changed: an emptied limit is sent as null (removed)", () => {
    const limited = key({ rate_limits: { requests_per_minute: 60, tokens_per_minute: 100_000 } });
    const values = formOf(limited);
    assert.deepEqual([values.rpm, values.tpm], ['60', '100000']);
    assert.deepEqual(changeOf(limited, values), {}, 'untouched limits are not sent');
    assert.deepEqual(changeOf(limited, { ...values, rpm: '' }), {
      rate_limits: { requests_per_minute: null, tokens_per_minute: 100_000 },
    });
    assert.deepEqual(changeOf(limited, { ...values, rpm: '', tpm: '' }), {
      rate_limits: { requests_per_minute: null, tokens_per_minute: null },
    });
    assert.deepEqual(changeOf(key(), { ...formOf(key()), tpm: '5000' }), {
      rate_limits: { requests_per_minute: null, tokens_per_minute: 5000 },
    });
  });

  it("shows a key's limits short and exact, or a dash for none", () => {
    assert.deepEqual([60, 1500, 100_000, 123_456, 2_000_000, 2_500_000, 1_000_000_000].map(perMinuteText), [
      '60',
      '1.5k',
      '100k',
      '123,456',
      '2M',
      '2.5M',
      '1B',
    ]);
    assert.deepEqual(limitsText({ requests_per_minute: 60, tokens_per_minute: 100_000 }), {
      short: '60 rpm · 100k tpm',
      words: 'At most 60 requests and 100,000 tokens a minute',
      none: false,
    });
    assert.equal(limitsText({ requests_per_minute: null, tokens_per_minute: 1_000 }).short, '1k tpm');
    assert.deepEqual(limitsText({ requests_per_minute: null, tokens_per_minute: null }), {
      short: '—',
      words: 'No rate limits of its own',
      none: true,
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
