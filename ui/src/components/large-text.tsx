/**
 * A text too large to draw at once (a 2 MB message, a pasted document), shown as its beginning with
 * "Show all" and a copy button: drawing it whole would hold the page for seconds before anything else
 * of the log could be read. A text of ordinary size is drawn as it is.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/** Texts longer than this are gated. */
export const LARGE_TEXT_CHARS = 20_000;
/** What a gated text shows of itself. */
const PREVIEW_CHARS = 2_000;

export const sizeText = (chars: number): string =>
  chars >= 1_000_000 ? `${(chars / 1_000_000).toFixed(1)} M characters` : `${Math.round(chars / 1000)} K characters`;

/** `render` draws the text (a paragraph, a pre); a large one gets its beginning until asked for all. */
export function LargeText({ text, render }: { text: string; render(shown: string): ComponentChildren }) {
  const [whole, setWhole] = useState(false);
  if (whole || text.length <= LARGE_TEXT_CHARS) return <>{render(text)}</>;
  return (
    <div class="large-text">
      {render(`${text.slice(0, PREVIEW_CHARS)}…`)}
      <p class="large-text-gate">
        <span>
          Large: {sizeText(text.length)}, the first {PREVIEW_CHARS.toLocaleString('en-US')} shown.{' '}
        </span>
        <button type="button" onClick={() => setWhole(true)}>
          Show all
        </button>{' '}
        <button type="button" onClick={() => void navigator.clipboard?.writeText(text)}>
          Copy all
        </button>
      </p>
    </div>
  );
}

/** A block (a JSON field) too large to draw: nothing of it drawn until asked for, with its size said. */
export function LargeGate({ chars, children }: { chars: number; children: () => ComponentChildren }) {
  const [shown, setShown] = useState(false);
  if (shown || chars <= LARGE_TEXT_CHARS * 10) return <>{children()}</>;
  return (
    <p class="large-text-gate">
      <span>Large: {sizeText(chars)}. </span>
      <button type="button" onClick={() => setShown(true)}>
        Show it
      </button>
    </p>
  );
}
