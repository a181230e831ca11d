/**
 * Export of every log the explorer's window and filters match — all of them, not the page shown — as
 * CSV of the columns shown, or JSON Lines of every field; the server streams it through a single-use link
 * and the browser saves it to disk as it arrives.
 */
import { useState } from 'preact/hooks';
import { SidePanel } from './side-panel';
import { exportLink } from '../api';
import type { ViewState } from '../lib/view-state';
import { shownFields } from './log-table';
import { useSubmit } from './use-submit';

export function ExportDialog({
  apiKey,
  state,
  count,
  onClose,
}: {
  apiKey: string;
  state: ViewState;
  /** null while the count is still on its way. */
  count: number | null;
  onClose(): void;
}) {
  const [format, setFormat] = useState<'csv' | 'jsonl'>('csv');
  const { busy, error, run } = useSubmit();
  const save = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const url = await exportLink(apiKey, state, Date.now(), format, format === 'csv' ? shownFields() : null);
      // The browser downloads the link itself, to disk, under the name the server gives.
      const link = document.createElement('a');
      link.href = url;
      link.download = '';
      link.click();
      onClose();
    });
  };
  return (
    <SidePanel
      label="Export logs"
      title={count === null ? 'Export every matching log' : `Export ${count} logs`}
      onClose={onClose}
    >
      <form class="stack" onSubmit={save}>
        <p>Every log of this time window and these filters, not only this page, newest first.</p>
        <label class="inline">
          <input type="radio" name="format" checked={format === 'csv'} onChange={() => setFormat('csv')} /> CSV of the
          columns shown
        </label>
        <label class="inline">
          <input type="radio" name="format" checked={format === 'jsonl'} onChange={() => setFormat('jsonl')} /> JSON
          Lines of every field
        </label>
        <p class="summary">
          Long inputs and outputs are cut at 8,192 characters, as in the table; a log opened here is whole.
        </p>
        {error && (
          <p role="alert" class="error">
            {error.message}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Exporting…' : 'Export'}
        </button>
      </form>
    </SidePanel>
  );
}
