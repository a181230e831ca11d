/**
 * What a page says when the signed-in key may not use it: which scope it needs and what to do, rather
 * than the API's 403 as an error.
 */
import type { Scope } from '../lib/key-form';

export function NeedsScope({ page, scope, keyName }: { page: string; scope: Scope; keyName: string }) {
  return (
    <section aria-label={page} class="settings">
      <h1>{page}</h1>
      <p role="note" class="scope-note">
        The {page} page needs a key with the <strong>{scope}</strong> scope. The key you signed in with (
        <strong>{keyName}</strong>) does not have it. Sign in with a key that has the {scope} scope, or ask someone who
        has one to add it to this key.
      </p>
    </section>
  );
}
