import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from '../../src/logs/uuid7.js';

const LAYOUT = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('is a version-7, RFC variant UUID whose first 48 bits are the time', () => {
    const now = Date.UTC(2026, 10, 23, 1, 2, 3, 456);
    const id = uuidv7(now);
    assert.match(id, LAYOUT);
    assert.equal(parseInt(id.replace('-', '').slice(0, 12), 16), now);
  });

  it('sorts by time across milliseconds and does not repeat', () => {
    const start = Date.now();
    const ids = Array.from({ length: 2000 }, (_, i) => uuidv7(start + Math.floor(i / 10)));
    assert.equal(new Set(ids).size, ids.length);
    for (let i = 10; i < ids.length; i += 10) assert.ok(ids[i - 10] < ids[i], `${ids[i - 10]} < ${ids[i]}`);
    for (const id of ids) assert.match(id, LAYOUT);
  });
});
