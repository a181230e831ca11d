/**
 * A button for what cannot be undone (delete): the first press asks, in place, and only the second acts.
 * No window.confirm: it blocks the page and cannot be styled or reached the same way by the keyboard.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export function ConfirmButton({
  label,
  text = 'Delete',
  confirm,
  onConfirm,
  disabled,
}: {
  /** The button's accessible name before asking: "Delete key openai". */
  label: string;
  /** What the button reads before asking (its accessible name should contain it). */
  text?: string;
  /** The question's button: "Delete the openai key". */
  confirm: string;
  onConfirm(): void | Promise<void>;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const question = useRef<HTMLButtonElement>(null);
  // The question takes the focus once, when asked: Enter confirms, Tab reaches Cancel.
  useEffect(() => {
    if (asking) question.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button
        type="button"
        class="danger"
        aria-label={label}
        disabled={disabled}
        onClick={(e) => (e.stopPropagation(), setAsking(true))}
      >
        {text}
      </button>
    );
  return (
    <span class="confirm">
      <button
        type="button"
        class="danger"
        disabled={busy}
        ref={question}
        onClick={async (e) => {
          e.stopPropagation();
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {confirm}
      </button>
      <button type="button" onClick={(e) => (e.stopPropagation(), setAsking(false))}>
        Cancel
      </button>
    </span>
  );
}
