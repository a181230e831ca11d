/**
 * A key's secret, shown the one time the API gives it (made or rotated): selectable, with a copy button
 * that says "Copied" once the clipboard holds it, and a plain warning that it is not shown again.
 */
import { useState } from 'preact/hooks';

export function KeySecret({ secret, name }: { secret: string; name: string }) {
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
    <div class="key-secret">
      <p role="note" class="key-secret-warning">
        <strong>Copy this secret now: it will not be shown again.</strong> gatelog keeps only its hash; a lost secret
        means rotating the key.
      </p>
      <label>
        Secret of {name}
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
