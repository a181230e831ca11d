/**
 * A budget's periods (docs/api.md "Budgets"): local midnight in the budget's time zone, weeks from
 * Monday, months from the 1st, across changes of the clocks; one period for a total budget.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { periodAt } from '../../src/budgets/period.js';
import { isTimeZone } from '../../src/util/time-zone.js';

const at = (iso: string) => Date.parse(iso);
const bounds = (period: Parameters<typeof periodAt>[0], tz: string, now: string) => {
  const { start, end } = periodAt(period, tz, at(now));
  return [new Date(start).toISOString(), end === null ? null : new Date(end).toISOString()];
};

describe('budget periods', () => {
  it('begins days, weeks and months at midnight UTC by default', () => {
    assert.deepEqual(bounds('day', 'UTC', '2026-11-29T08:30:00Z'), [
      '2026-11-29T00:00:00.000Z',
      '2026-11-30T00:00:00.000Z',
    ]);
    // 2026-11-29 is a Sunday: its week began on Monday the 23rd.
    assert.deepEqual(bounds('week', 'UTC', '2026-11-29T23:59:59Z'), [
      '2026-11-23T00:00:00.000Z',
      '2026-11-30T00:00:00.000Z',
    ]);
    assert.deepEqual(bounds('week', 'UTC', '2026-11-30T00:00:00Z'), [
      '2026-11-30T00:00:00.000Z',
      '2026-12-07T00:00:00.000Z',
    ]);
    assert.deepEqual(bounds('month', 'UTC', '2026-12-31T23:00:00Z'), [
      '2026-12-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
  });

  it("begins them at the time zone's own midnight", () => {
    // 08:30 UTC is 17:30 in Tokyo; 23:30 UTC is already the next day there.
    assert.deepEqual(bounds('day', 'Asia/Tokyo', '2026-11-29T08:30:00Z'), [
      '2026-11-28T15:00:00.000Z',
      '2026-11-29T15:00:00.000Z',
    ]);
    assert.deepEqual(bounds('day', 'Asia/Tokyo', '2026-11-29T23:30:00Z'), [
      '2026-11-29T15:00:00.000Z',
      '2026-11-30T15:00:00.000Z',
    ]);
    assert.deepEqual(bounds('day', 'America/Los_Angeles', '2026-11-29T05:00:00Z'), [
      '2026-11-28T08:00:00.000Z',
      '2026-11-29T08:00:00.000Z',
    ]);
  });

  it('follows the clocks when they change within a period', () => {
    // New York moves from EDT (UTC-4) to EST (UTC-5) on 2026-11-01: November begins at 04:00 UTC, December at 05:00.
    assert.deepEqual(bounds('month', 'America/New_York', '2026-11-15T12:00:00Z'), [
      '2026-11-01T04:00:00.000Z',
      '2026-12-01T05:00:00.000Z',
    ]);
    // Berlin's spring change, Sunday 2026-03-29: that day lasts 23 hours, the week 167.
    assert.deepEqual(bounds('day', 'Europe/Berlin', '2026-03-29T12:00:00Z'), [
      '2026-03-28T23:00:00.000Z',
      '2026-03-29T22:00:00.000Z',
    ]);
    assert.deepEqual(bounds('week', 'Europe/Berlin', '2026-03-29T12:00:00Z'), [
      '2026-03-22T23:00:00.000Z',
      '2026-03-29T22:00:00.000Z',
    ]);
  });

  it('has one period for a total budget', () => {
    assert.deepEqual({ ...periodAt('total', 'UTC', Date.now()) }, { start: 0, end: null });
  });

  it('knows a time zone from a made-up one', () => {
    assert.ok(isTimeZone('Europe/Paris'));
    assert.ok(!isTimeZone('Mars/Olympus_Mons'));
  });
});
