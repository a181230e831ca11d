/**
 * Rotating a key, in a panel: how long the old secret keeps working (none, an hour, a day, a week), then
 * the new secret, shown this once.
 */
import { useState } from 'preact/hooks';
import { type ApiKey, type KeyWithSecret, rotateKey } from '../api-keys';
import { GRACE_CHOICES } from '../lib/key-form';
import { KeySecret } from './one-time-secret';
import { SidePanel } from './side-panel';
import { useSubmit } from './use-submit';

export function RotateKey({
  apiKey,
  target,
  onRotated,
  onClose,
}: {
  apiKey: string;
  target: ApiKey;
  onRotated(key: KeyWithSecret): void;
  onClose(): void;
}) {
  const [grace, setGrace] = useState<number>(GRACE_CHOICES[0].seconds);
  const [rotated, setRotated] = useState<KeyWithSecret | null>(null);
  const { busy, error, run } = useSubmit();
  const rotate = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const made = await rotateKey(apiKey, target.id, grace);
      setRotated(made);
      onRotated(made);
    });
  };
  return (
    <SidePanel label={`Rotate key ${target.name}`} title={`Rotate ${target.name}`} onClose={onClose}>
      {rotated ? (
        <div class="stack">
          <p>
            {target.name} has a new secret (<code>{rotated.prefix}…</code>).{' '}
            {grace === 0 ? 'The old secret no longer works.' : 'The old secret keeps working for the grace period.'}
          </p>
          <KeySecret secret={rotated.key} name={target.name} />
          <button type="button" onClick={onClose}>
            Done
          </button>
        </div>
      ) : (
        <form class="stack" onSubmit={rotate}>
          <p>
            A new secret for the same key: its name, scopes and models stay. Whoever uses the old secret needs the new
            one.
          </p>
          <fieldset>
            <legend>The old secret keeps working</legend>
            {GRACE_CHOICES.map((choice) => (
              <label class="inline" key={choice.seconds}>
                <input
                  type="radio"
                  name="grace"
                  checked={grace === choice.seconds}
                  onChange={() => setGrace(choice.seconds)}
                />{' '}
                {choice.label}
              </label>
            ))}
          </fieldset>
          {error && (
            <p role="alert" class="error">
              {error.message}
            </p>
          )}
          <button type="submit" disabled={busy}>
            Rotate key
          </button>
        </form>
      )}
    </SidePanel>
  );
}
