/** The Sessions page (sessions.tsx and its timeline), loaded when first shown (lazy-page.tsx). */
import { lazyPage } from './lazy-page';

export const SessionsPage = lazyPage(() => import('./sessions').then((m) => m.Sessions), 'Sessions');
