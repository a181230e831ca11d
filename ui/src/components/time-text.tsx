/**
 * A time as the user chose to read times: local or UTC, the same in every column and panel, with the
 * exact ISO 8601 instant on hover. The choice is kept in localStorage.
 */
import { signal } from '@preact/signals';
import { timeText, type TimeZoneChoice } from '../lib/format';

const STORE = 'gatelog.timeZone';

export const timeZone = signal<TimeZoneChoice>(localStorage.getItem(STORE) === 'utc' ? 'utc' : 'local');

export function setTimeZone(choice: TimeZoneChoice): void {
  localStorage.setItem(STORE, choice);
  timeZone.value = choice;
}

export function TimeText({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} title={iso}>
      {timeText(iso, timeZone.value)}
    </time>
  );
}
