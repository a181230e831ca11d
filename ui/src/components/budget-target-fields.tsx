/**
 * What a new budget applies to: a key (chosen from the organization's keys in use), a customer (its
 * customer_identifier, typed) or the whole organization. A budget keeps what it applies to: editing one
 * shows it, not as a field.
 */
import type { ApiError } from '../api';
import { type BudgetFormValues, TARGETS, type TargetType } from '../lib/budget-form';
import { type NamedKey, targetText } from '../lib/budget-list';
import { FieldError, fieldProps } from './field-error';

/** The keys the picker offers: those in use. */
export interface PickableKey extends NamedKey {
  prefix: string;
}

interface Props {
  form: string;
  values: BudgetFormValues;
  keys: readonly PickableKey[];
  /** Editing: what the budget applies to is shown, not changed. */
  fixed: boolean;
  error: ApiError | null;
  set(change: Partial<BudgetFormValues>): void;
}

const value = (e: Event) => (e.currentTarget as HTMLInputElement | HTMLSelectElement).value;

export function BudgetTargetFields({ form, values, keys, fixed, error, set }: Props) {
  if (fixed) {
    const byId = new Map(keys.map((k) => [k.id, k]));
    const appliesTo = { type: values.type, value: values.type === 'key' ? values.keyId : values.customer };
    return (
      <p class="field wide">
        Applies to: <strong>{targetText({ applies_to: appliesTo }, byId)}</strong>
      </p>
    );
  }
  const inUse = keys.filter((k) => k.revoked_at === null);
  return (
    <>
      <div class="field">
        <label>
          Applies to
          <select
            value={values.type}
            onChange={(e) => set({ type: value(e) as TargetType })}
            {...fieldProps(error, form, 'applies_to.type')}
          >
            {Object.entries(TARGETS).map(([type, label]) => (
              <option key={type} value={type}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <FieldError error={error} form={form} field="applies_to.type" />
      </div>
      {values.type === 'key' && (
        <div class="field">
          <label>
            Key
            <select
              value={values.keyId}
              onChange={(e) => set({ keyId: value(e) })}
              {...fieldProps(error, form, 'applies_to.value')}
            >
              <option value="">Choose a key…</option>
              {inUse.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name} ({k.prefix}…)
                </option>
              ))}
            </select>
          </label>
          <FieldError error={error} form={form} field="applies_to.value" />
        </div>
      )}
      {values.type === 'customer' && (
        <div class="field">
          <label>
            Customer
            <input
              value={values.customer}
              placeholder="acme"
              onInput={(e) => set({ customer: value(e) })}
              {...fieldProps(error, form, 'applies_to.value', `${form}-customer-hint`)}
            />
          </label>
          <span id={`${form}-customer-hint`} class="field-hint">
            The customer_identifier its calls carry.
          </span>
          <FieldError error={error} form={form} field="applies_to.value" />
        </div>
      )}
      {values.type === 'organization' && (
        <p class="field field-hint">Every call of the organization, whichever key makes it.</p>
      )}
    </>
  );
}
