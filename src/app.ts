/** buildApp: the HTTP layer over the services (services.ts): its plugins and routes, nothing it builds itself. */
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Services } from './services.js';
import { logRequestLines, requestLogger } from './logger.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/plumbing/error-handler.js';
import { closeConnectionsWhenClosing } from './http/plumbing/connections.js';
import { refuseImpossiblePathParams } from './http/plumbing/path-params.js';
import { registerContracts } from './http/plumbing/contracts.js';
import { registerJsonBodyParser } from './http/plumbing/json-body.js';
import { requestIdOf, sendRequestIds } from './http/plumbing/request-id.js';
import { requireAuth } from './http/plumbing/auth-hook.js';
import { sendSecurityHeaders } from './http/plumbing/security-headers.js';
import { registerDatasetRoutes } from './http/routes/datasets.js';
import { registerDocsPage } from './http/routes/docs-page.js';
import { registerEvaluatorRoutes } from './http/routes/evaluators.js';
import { registerKeyRoutes } from './http/routes/keys.js';
import { registerRateLimitRoutes } from './http/routes/rate-limits.js';
import { registerBudgetRoutes } from './http/routes/budgets.js';
import { registerExportDownloadRoute, registerExportTokenRoute } from './http/routes/export-tokens.js';
import { registerExportRoutes } from './http/routes/export.js';
import { registerFacetRoutes } from './http/routes/request-log-facets.js';
import { registerHealthRoutes } from './http/routes/health.js';
import { registerMetricsRoute } from './http/routes/metrics.js';
import { registerOpenApiRoute } from './http/routes/openapi.js';
import { registerOtelRoutes } from './http/routes/otel-traces.js';
import { registerProviderKeyRoutes } from './http/routes/provider-keys.js';
import { registerProviderKindRoutes } from './http/routes/provider-kinds.js';
import { registerRequestLogRoutes } from './http/routes/request-logs.js';
import { registerRequestLogStreamRoute } from './http/routes/request-log-stream.js';
import { registerRootRedirect } from './http/routes/root.js';
import { registerSessionRoutes } from './http/routes/sessions.js';
import { registerSettingsRoutes } from './http/routes/settings.js';
import { registerSummaryRoutes } from './http/routes/request-log-summary.js';
import { registerUi } from './http/routes/ui.js';
import { registerViewRoutes } from './http/routes/views.js';
// The proxied routes.
import { registerEmbeddingRoutes } from './http/embeddings.js';
import { registerChatRoutes } from './http/chat.js';
import { registerAnthropicRoutes } from './http/anthropic-messages.js';
import { registerResponsesRoutes } from './http/responses.js';
import { registerTranscriptionRoutes } from './http/transcription.js';
import { registerModelListRoutes } from './http/model-lists.js';

/** The largest body any JSON route accepts (docs/api.md "Logging API"); audio uploads have their own limit. */
export const JSON_BODY_LIMIT = 20 * 1024 * 1024;

export async function buildApp(services: Services): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: services.logger,
    bodyLimit: JSON_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    // A request that arrives during shutdown on a connection already open is served (its answer closes
    // the connection, connections.ts) and logged like any other, rather than Fastify's bare 503.
    return503OnClosing: false,
    // One line per request, written when it is answered (logRequestLines), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // A client that takes longer than this to send its whole request (slow headers, a body one byte at
    // a time, also after it was answered 401) gets a 408 and its connection closed. Node checks
    // connections at an interval, a fraction of the timeout so that the 408 comes close to it; it
    // enforces the request timeout only when the headers timeout is not longer (measured on Node 20).
    requestTimeout: services.config.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, services.config.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(100, Math.min(5000, services.config.requestTimeoutMs / 4)),
    },
    frameworkErrors,
    clientErrorHandler,
    genReqId: requestIdOf,
    childLoggerFactory: requestLogger,
  });
  logRequestLines(app);
  sendRequestIds(app);
  sendSecurityHeaders(app);
  registerErrorHandling(app, services.metrics, services.config.publicUrl);
  await registerContracts(app);
  registerOpenApiRoute(app);
  registerDocsPage(app);
  registerJsonBodyParser(app);
  refuseImpossiblePathParams(app);
  closeConnectionsWhenClosing(app);
  // Live tails never end by themselves: they are ended, and the background work stopped, before the
  // server waits for its requests to finish.
  app.addHook('preClose', () => services.quiesce());
  registerHealthRoutes(app, services, services.retention);
  registerMetricsRoute(app, services.metrics, services.config.metricsToken);
  await registerUi(app, services.config.uiPath);
  registerRootRedirect(app, services.config.uiPath);
  // Outside the authenticated scope: the export link's token is its credential, on this route only.
  registerExportDownloadRoute(app, services);
  await app.register(async (scope) => {
    requireAuth(scope, services.authenticator);
    registerKeyRoutes(scope, services, services.authenticator);
    registerRateLimitRoutes(scope, services, services.limits.rules);
    registerBudgetRoutes(scope, services, services.budgets);
    registerProviderKeyRoutes(scope, services, services.providerKeys, services.providerKinds);
    registerProviderKindRoutes(scope, services.providerKinds);
    registerRequestLogRoutes(scope, services);
    registerRequestLogStreamRoute(scope, services.tails);
    registerSummaryRoutes(scope, services);
    registerFacetRoutes(scope, services);
    registerSessionRoutes(scope, services);
    registerExportRoutes(scope, services);
    registerExportTokenRoute(scope, services);
    registerEvaluatorRoutes(scope, services);
    registerDatasetRoutes(scope, services);
    registerViewRoutes(scope, services);
    await registerOtelRoutes(scope, services);
    registerSettingsRoutes(scope, services, services.settings, services.cache);
    registerEmbeddingRoutes(scope, services);
    registerChatRoutes(scope, services);
    registerAnthropicRoutes(scope, services);
    registerResponsesRoutes(scope, services);
    await registerTranscriptionRoutes(scope, services);
    registerModelListRoutes(scope, services);
  });
  return app;
}
