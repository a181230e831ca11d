/**
 * The panel every dialog of the explorer opens in: at the side, a title, a close button. It takes the
 * focus when it opens (its first field, or the panel itself), closes on Esc, and gives the focus back to
 * what had it before (the button that opened it) when it closes, so the keyboard never gets lost.
 */
import type { ComponentChildren, RefObject } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

interface Props {
  label: string;
  title: ComponentChildren;
  onClose(): void;
  /**
   * Set for a panel whose keys work on the panel itself (the log detail's j/k): it takes the focus
   * rather than its first field.
   */
  focusRef?: RefObject<HTMLDivElement | null>;
  children: ComponentChildren;
}

/** Open panels, the last opened on top: Esc closes the top one only. */
const open: symbol[] = [];

const FIELDS = 'input:not([type=hidden]):not([disabled]), select:not([disabled]), textarea:not([disabled])';

export function SidePanel({ label, title, onClose, focusRef, children }: Props) {
  const own = useRef<HTMLDivElement>(null);
  const panel = focusRef ?? own;
  const latestClose = useRef(onClose);
  latestClose.current = onClose;

  // Before the panel is painted: it is never seen without the focus, nor typed into by a fast hand.
  useLayoutEffect(() => {
    const me = Symbol(label);
    open.push(me);
    // Nothing has moved the focus yet: what has it opened this panel.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const element = panel.current;
    const first = focusRef ? null : element?.querySelector<HTMLElement>(FIELDS);
    (first ?? element)?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented || open[open.length - 1] !== me) return;
      e.preventDefault();
      latestClose.current();
    };
    addEventListener('keydown', onKey);
    return () => {
      removeEventListener('keydown', onKey);
      open.splice(open.indexOf(me), 1);
      // Back to the opener when the focus was in the panel (now gone) or nowhere; not when the user
      // has since moved it elsewhere on purpose.
      const now = document.activeElement;
      const lost = !now || now === document.body || (element !== null && element.contains(now));
      if (lost && opener?.isConnected) opener.focus();
    };
  }, []);

  return (
    <div class="panel" role="dialog" aria-label={label} tabIndex={-1} ref={panel}>
      <div class="panel-head">
        <h2>{title}</h2>
        <button type="button" class="close" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      {children}
    </div>
  );
}
