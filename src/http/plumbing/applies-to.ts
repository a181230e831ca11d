/**
 * What a rate limit or a budget applies to (docs/api.md "Keys, budgets and rate limits"): the caller's
 * own organization (its id, or no value), or a customer by its customer_identifier. A key's target is
 * each route's own: budgets name a key of the organization, rate limits refuse one (a key's are on it).
 */
import { z } from 'zod';
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

/**
 * The body's `applies_to` of a new budget or rate limit: the target's type, and the value that names it,
 * each as the route describes them (no description: none).
 */
export function appliesToSchema(described: { type?: string; value: string }) {
  const type = z.enum(['key', 'customer', 'organization']);
  return z.strictObject({
    type: described.type === undefined ? type : type.describe(described.type),
    value: z.string().trim().min(1).max(120).optional().describe(described.value),
  });
}

export const invalidTarget = (message: string, param = 'applies_to.value') =>
  new AppError(400, 'invalid_value', message, param);
