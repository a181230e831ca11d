/** buildApp: the HTTP layer, with every dependency passed in (no module-level singletons). */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { DbHandle } from './db/connect.js';
import { registerErrorHandling } from './http/error-handler.js';
import { registerHealthRoutes } from './http/health.js';
import { requireAuth } from './http/auth-hook.js';
import { registerProviderKeyRoutes } from './http/provider-keys.js';
import { Authenticator } from './auth/authenticator.js';

export interface AppDeps {
  readonly config: Config;
  readonly db: DbHandle;
  /** Encrypts provider keys at rest (AES-256-GCM). */
  readonly secretKey: Buffer;
}

/** The largest body any JSON route accepts (CONTRACT §5); audio uploads have their own limit. */
export const JSON_BODY_LIMIT = 20 * 1024 * 1024;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.config.logLevel === 'silent' ? false : { level: deps.config.logLevel },
    bodyLimit: JSON_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
  });
  registerErrorHandling(app);
  registerHealthRoutes(app, deps);
  const authenticator = new Authenticator(deps.db.db);
  await app.register(async (scope) => {
    requireAuth(scope, authenticator);
    registerProviderKeyRoutes(scope, deps);
  });
  return app;
}
