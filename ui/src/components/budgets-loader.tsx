/** The Budgets page (budgets.tsx and its form), loaded when first shown (lazy-page.tsx). */
import { lazyPage } from './lazy-page';

export const BudgetsPage = lazyPage(() => import('./budgets').then((m) => m.Budgets), 'Budgets');
