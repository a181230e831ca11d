/**
 * The form that makes a budget or changes one: name, what it applies to (made only), amount, period,
 * time zone, alert thresholds (percentages), webhook and whether unpriced models may pass. An amount or a
 * threshold that cannot be sent is said before anything is; a refusal of the API shows next to the
 * field it names (`param`).
 */
import { useState } from 'preact/hooks';
import { type Budget, type BudgetWithSecret, createBudget, patchBudget } from '../api-budgets';
import {
  budgetChangeOf,
  budgetFormOf,
  budgetFormProblem,
  type BudgetFormValues,
  createBudgetBody,
  emptyBudgetForm,
  type Period,
  PERIODS,
} from '../lib/budget-form';
import { BudgetTargetFields, type PickableKey } from './budget-target-fields';
import { FieldError, fieldProblem, fieldProps, FormError } from './field-error';
import { useSubmit } from './use-submit';

const FIELDS = [
  'name',
  'applies_to',
  'amount_usd',
  'period',
  'tz',
  'alert_thresholds',
  'webhook_url',
  'allow_unpriced',
];

/** The browser's time zone, offered as a hint (the server checks the one typed). */
const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const text = (e: Event) => (e.currentTarget as HTMLInputElement).value;

type Props = { apiKey: string; keys: readonly PickableKey[]; onSaved(budget: BudgetWithSecret): void } & (
  { editing: null } | { editing: Budget; onCancel(): void }
);

export function BudgetForm(props: Props) {
  const { apiKey, editing, keys } = props;
  const [values, setValues] = useState<BudgetFormValues>(editing ? budgetFormOf(editing) : emptyBudgetForm());
  const { busy, error, setError, run } = useSubmit();
  const [note, setNote] = useState<string | null>(null);
  const form = editing ? `budget-${editing.id}` : 'new-budget';
  const set = (change: Partial<BudgetFormValues>) => setValues({ ...values, ...change });
  const input = (field: string, hint?: string) => fieldProps(error, form, field, hint);
  const zone = browserZone();

  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    setNote(null);
    const problem = budgetFormProblem(values, editing !== null);
    if (problem) {
      setError(fieldProblem(problem.param, problem.message));
      return;
    }
    if (props.editing === null) {
      void run(async () => {
        const made = await createBudget(apiKey, createBudgetBody(values));
        setValues(emptyBudgetForm());
        props.onSaved(made);
      });
      return;
    }
    const { editing: budget } = props;
    const change = budgetChangeOf(budget, values);
    if (Object.keys(change).length === 0) setNote('Nothing changed.');
    else void run(async () => props.onSaved(await patchBudget(apiKey, budget.id, change)));
  };

  return (
    <form
      class="settings-form budget-form"
      aria-label={editing ? `Edit budget ${editing.name}` : 'Create a budget'}
      onSubmit={submit}
    >
      {!editing && <h3>Create a budget</h3>}
      <div class="field">
        <label>
          Name
          <input value={values.name} onInput={(e) => set({ name: text(e) })} {...input('name')} />
        </label>
        <FieldError error={error} form={form} field="name" />
      </div>
      <BudgetTargetFields form={form} values={values} keys={keys} fixed={editing !== null} error={error} set={set} />
      <div class="field">
        <label>
          Amount (USD)
          <input
            type="text"
            inputMode="decimal"
            value={values.amount}
            placeholder="50"
            onInput={(e) => set({ amount: text(e) })}
            {...input('amount_usd')}
          />
        </label>
        <FieldError error={error} form={form} field="amount_usd" />
      </div>
      <div class="field">
        <label>
          Period
          <select
            value={values.period}
            onChange={(e) => set({ period: (e.currentTarget as HTMLSelectElement).value as Period })}
            {...input('period')}
          >
            {Object.entries(PERIODS).map(([period, label]) => (
              <option key={period} value={period}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <FieldError error={error} form={form} field="period" />
      </div>
      <div class="field">
        <label>
          Time zone
          <input
            value={values.tz}
            list={`${form}-zones`}
            spellcheck={false}
            onInput={(e) => set({ tz: text(e) })}
            {...input('tz', `${form}-tz-hint`)}
          />
        </label>
        <datalist id={`${form}-zones`}>
          <option value="UTC" />
          {zone !== 'UTC' && <option value={zone} />}
        </datalist>
        <span id={`${form}-tz-hint`} class="field-hint">
          Where days begin: an IANA name such as {zone === 'UTC' ? 'Europe/Berlin' : zone} (this browser&apos;s).
        </span>
        <FieldError error={error} form={form} field="tz" />
      </div>
      <div class="field">
        <label>
          Alert thresholds (%)
          <input
            value={values.thresholds}
            placeholder="80, 100"
            onInput={(e) => set({ thresholds: text(e) })}
            {...input('alert_thresholds', `${form}-thresholds-hint`)}
          />
        </label>
        <span id={`${form}-thresholds-hint`} class="field-hint">
          Percentages of the amount, comma-separated; the webhook is called once a period at each.
        </span>
        <FieldError error={error} form={form} field="alert_thresholds" />
      </div>
      <div class="field">
        <label>
          Webhook URL (optional)
          <input
            type="text"
            inputMode="url"
            spellcheck={false}
            value={values.webhook}
            placeholder="https://alerts.example.com/gatelog"
            onInput={(e) => set({ webhook: text(e) })}
            {...input('webhook_url')}
          />
        </label>
        <FieldError error={error} form={form} field="webhook_url" />
      </div>
      <div class="field">
        <label class="check">
          <input
            type="checkbox"
            checked={values.allowUnpriced}
            onChange={(e) => set({ allowUnpriced: (e.currentTarget as HTMLInputElement).checked })}
            {...input('allow_unpriced', `${form}-unpriced-hint`)}
          />
          Allow unpriced models
        </label>
        <span id={`${form}-unpriced-hint`} class="field-hint">
          Calls to a model without a known price pass, and count nothing. Off: they are refused.
        </span>
        <FieldError error={error} form={form} field="allow_unpriced" />
      </div>
      <FormError error={error} fields={FIELDS} />
      {note && (
        <p role="status" class="summary">
          {note}
        </p>
      )}
      <div class="actions wide">
        <button type="submit" disabled={busy}>
          {editing ? 'Save budget' : 'Create budget'}
        </button>
        {props.editing !== null && (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
