/**
 * A secret shown the one time the API gives it — a key's (made or rotated), a budget webhook's signing
 * secret (made with the budget, or with the webhook added): selectable, with a copy button that says
 * "Copied" once the clipboard holds it, and a plain warning that it is not shown again and what losing
 * it means.
 */
import { useState } from 'preact/hooks';

interface Props {
  secret: string;
  /** The field's label: "Secret of ci-reader". */
  label: string;
  /** What a lost secret means, after the warning: "a lost secret means rotating the key." */
  ifLost: string;
}

export function OneTimeSecret({ secret, label, ifLost }: Props) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      // No clipboard (an insecure page, a refused permission): the field stays there to select by hand.
      setCopied('failed');
    }
  };
  return (
    <div class="one-time-secret">
      <p role="note" class="one-time-secret-warning">
        <strong>Copy this secret now: it will not be shown again.</strong> {ifLost}
      </p>
      <label>
        {label}
        <input
          type="text"
          readOnly
          value={secret}
          spellcheck={false}
          onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
        />
      </label>
      <button type="button" onClick={copy}>
        {copied === 'yes' ? 'Copied' : 'Copy'}
      </button>
      <span role="status" class={copied === 'failed' ? 'error' : 'good'}>
        {copied === 'yes' && 'The secret is on the clipboard.'}
        {copied === 'failed' && 'The clipboard could not be used here: select the secret and copy it.'}
      </span>
    </div>
  );
}

/** A key's secret: gatelog keeps only its hash. */
export const KeySecret = ({ secret, name }: { secret: string; name: string }) => (
  <OneTimeSecret
    secret={secret}
    label={`Secret of ${name}`}
    ifLost="gatelog keeps only its hash; a lost secret means rotating the key."
  />
);
