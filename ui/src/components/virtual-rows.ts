/**
 * Virtualised rows: of a long list only the rows in (and near) the window are in the DOM, the rest stand
 * in as two spacers of their height, so that scrolling through thousands of logs stays smooth. The page
 * itself scrolls (the table is not a box of its own): what is visible comes from the body's top edge and
 * the window's height. Row heights are measured from the rows shown (a row is one line, a card on a
 * phone) and their mean stands for the rows not shown.
 */
import type { RefObject } from 'preact';
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';

/** Fewer rows than this are all rendered: a page of 50 gains nothing from it. */
export const VIRTUAL_FROM = 120;
/** Rows rendered beyond each edge of the window, so that a quick scroll does not show blank space. */
const OVERSCAN = 20;
const GUESS_PX = 33;

export interface RowWindow {
  start: number;
  end: number;
  /** Height of the rows before `start` and after `end`, in pixels. */
  before: number;
  after: number;
}

export function useRowWindow(count: number, body: RefObject<HTMLElement | null>): RowWindow {
  const [rowPx, setRowPx] = useState(GUESS_PX);
  const [range, setRange] = useState({ start: 0, end: Math.min(count, VIRTUAL_FROM) });
  const virtual = count >= VIRTUAL_FROM;

  useEffect(() => {
    if (!virtual) return;
    let frame = 0;
    const measure = () => {
      frame = 0;
      const el = body.current;
      if (!el) return;
      const top = el.getBoundingClientRect().top;
      const first = Math.max(0, Math.floor(-top / rowPx) - OVERSCAN);
      const last = Math.min(count, Math.ceil((window.innerHeight - top) / rowPx) + OVERSCAN);
      setRange((r) =>
        r.start === first && r.end === Math.max(first, last) ? r : { start: first, end: Math.max(first, last) },
      );
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(measure);
    };
    measure();
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('scroll', schedule);
      window.removeEventListener('resize', schedule);
    };
  }, [virtual, count, rowPx]);

  // The mean height of the rows shown, once they are laid out: the spacers' unit.
  useLayoutEffect(() => {
    if (!virtual || !body.current) return;
    const rows = [...body.current.querySelectorAll<HTMLElement>('tr[data-log-id]')];
    if (rows.length === 0) return;
    const mean = rows.reduce((sum, r) => sum + r.offsetHeight, 0) / rows.length;
    if (mean > 0 && Math.abs(mean - rowPx) > 0.5) setRowPx(mean);
  });

  if (!virtual) return { start: 0, end: count, before: 0, after: 0 };
  const start = Math.min(range.start, count);
  const end = Math.min(Math.max(range.end, start), count);
  return { start, end, before: start * rowPx, after: (count - end) * rowPx };
}
