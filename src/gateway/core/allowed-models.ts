/**
 * A key's allowed models (docs/api.md "Keys"): every model a call may reach —
 * its model, each fallback, each model of its load-balance group — must be one its key may call. Asked
 * while planning (targets.ts), before anything is sent.
 */
import type { AuthContext } from '../../auth/authenticator.js';
import { modelAllowed } from '../../auth/model-patterns.js';
import { AppError } from '../../errors.js';
import { chooseFor } from './credential.js';
import type { ProxyDeps } from './deps.js';
import type { RoutingParams } from './routing-params.js';

/**
 * 403 model_not_allowed when the key may not call `model` (served by `provider`). Planning asks it of
 * each model as it is chosen, before looking for its provider key: a model the key may not call is
 * refused as such, not as a model without a key.
 */
export function assertModelAllowed(auth: AuthContext, model: string, provider: string, param: string): void {
  if (!modelAllowed(auth.allowedModels, model, provider)) {
    throw new AppError(403, 'model_not_allowed', `This key may not call the model '${model}'.`, param);
  }
}

/** Every model of a load-balance group is a choice the call could make: each must be allowed. */
export async function assertGroupAllowed(deps: ProxyDeps, auth: AuthContext, routing: RoutingParams): Promise<void> {
  if (auth.allowedModels.length === 0 || routing.loadBalance === null) return;
  for (const { model } of routing.loadBalance) {
    const provider = await chooseFor(deps, auth, model).then(
      (choice) => choice.name,
      () => '',
    );
    assertModelAllowed(auth, model, provider, 'load_balance_group.models');
  }
}
