/**
 * What a rate limit or a budget applies to (docs/api.md "Keys, budgets and rate limits"): the caller's
 * own organization (its id, or no value), or a customer by its customer_identifier. A key's target is
 * each route's own: budgets name a key of the organization, rate limits refuse one (a key's are on it).
 */
import type { AuthContext } from '../../auth/authenticator.js';
import { AppError } from '../../errors.js';

export interface AppliesTo<Type extends string> {
  type: Type;
  value: string;
}

export function organizationOrCustomer(
  auth: Pick<AuthContext, 'organizationId'>,
  appliesTo: { type: 'organization' | 'customer'; value?: string },
): AppliesTo<'organization' | 'customer'> {
  if (appliesTo.type === 'organization') {
    if (appliesTo.value !== undefined && appliesTo.value !== auth.organizationId) {
      throw invalidTarget("applies_to.value must be this organization's id, or absent.");
    }
    return { type: 'organization', value: auth.organizationId };
  }
  if (appliesTo.value === undefined) throw invalidTarget('A customer is named by its customer_identifier.');
  return { type: 'customer', value: appliesTo.value };
}

export const invalidTarget = (message: string, param = 'applies_to.value') =>
  new AppError(400, 'invalid_value', message, param);
