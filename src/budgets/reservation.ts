/** What a call holds of a budget's period, and how it ends (ledger.ts). */

export interface Reservation {
  id: string;
  budgetId: string;
  periodStart: number;
  amount: number;
  expiresAt: number;
}

/** A reservation ended with its call's cost. */
export interface Settlement {
  reservation: Pick<Reservation, 'id' | 'budgetId' | 'periodStart'>;
  cost: number;
}

export interface Standing {
  spent: number;
  reserved: number;
}

/** How a budget's period is named in maps. */
export const periodKey = (budgetId: string, periodStart: number) => `${budgetId}:${periodStart}`;
