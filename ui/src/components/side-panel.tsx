/** The panel every dialog of the explorer opens in: at the side, a title, a close button. */
import type { ComponentChildren, Ref } from 'preact';

interface Props {
  label: string;
  title: ComponentChildren;
  onClose(): void;
  /** Set for a panel that takes the focus when it opens (its keys then work at once). */
  focusRef?: Ref<HTMLDivElement>;
  children: ComponentChildren;
}

export function SidePanel({ label, title, onClose, focusRef, children }: Props) {
  return (
    <div class="panel" role="dialog" aria-label={label} tabIndex={focusRef ? -1 : undefined} ref={focusRef}>
      <div class="panel-head">
        <h2>{title}</h2>
        <button type="button" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      {children}
    </div>
  );
}
