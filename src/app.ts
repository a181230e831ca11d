/** buildApp: the HTTP layer, with every dependency passed in (no module-level singletons). */
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { Authenticator } from './auth/authenticator.js';
import { AudioDurations } from './gateway/transcription/audio-duration.js';
import { TokenCounter } from './gateway/tokens/token-counter.js';
import { UploadBudget } from './gateway/transcription/upload-budget.js';
import { requireAuth } from './http/auth-hook.js';
import { Metrics, registerMetricsRoute } from './metrics.js';
import { CircuitBreaker } from './gateway/core/circuit-breaker.js';
import { ResponseCache } from './cache/response-cache.js';
import { RetentionSweep } from './retention/sweep.js';
import { registerOtelRoutes } from './http/otel-traces.js';
import { SettingsCache } from './org-settings/settings.js';
import { registerSettingsRoutes } from './http/settings.js';
import { registerContracts } from './http/contracts.js';
import { requestIdOf, sendRequestIds } from './http/request-id.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/error-handler.js';
import { registerEmbeddingRoutes } from './http/embeddings.js';
import { registerChatRoutes } from './http/chat.js';
import { registerAnthropicRoutes } from './providers/anthropic/messages-route/http.js';
import { registerResponsesRoutes } from './http/responses.js';
import { registerTranscriptionRoutes } from './http/transcription.js';
import { registerDatasetRoutes } from './http/datasets.js';
import { registerEvaluatorRoutes } from './http/evaluators.js';
import { registerJsonBodyParser } from './http/json-body.js';
import { refuseImpossiblePathParams } from './http/path-params.js';
import { closeConnectionsWhenClosing } from './http/connections.js';
import { registerHealthRoutes } from './http/health.js';
import { registerProviderKeyRoutes } from './http/provider-keys.js';
import { registerProviderKindRoutes } from './http/provider-kinds.js';
import { registerRequestLogRoutes } from './http/request-logs.js';
import { registerRequestLogStreamRoute } from './http/request-log-stream.js';
import { TailHub } from './logs/tail/hub.js';
import { registerFacetRoutes } from './http/request-log-facets.js';
import { registerSummaryRoutes } from './http/request-log-summary.js';
import { registerUi } from './http/ui.js';
import { registerRootRedirect } from './http/root.js';
import { registerExportRoutes } from './http/export.js';
import { registerExportDownloadRoute, registerExportTokenRoute } from './http/export-tokens.js';
import { registerViewRoutes } from './http/views.js';
import { sendSecurityHeaders } from './http/security-headers.js';
import type { AppDeps } from './deps.js';
import { logRequestLines, requestLogger } from './logger.js';
import { ProviderKeyCache } from './providers/key-cache.js';
import { BUILT_IN_PROVIDER_KINDS } from './providers/registry.js';

/** The largest body any JSON route accepts (docs/api.md "Logging API"); audio uploads have their own limit. */
export const JSON_BODY_LIMIT = 20 * 1024 * 1024;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
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
    requestTimeout: deps.config.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, deps.config.requestTimeoutMs),
      connectionsCheckingInterval: Math.max(100, Math.min(5000, deps.config.requestTimeoutMs / 4)),
    },
    frameworkErrors,
    clientErrorHandler,
    genReqId: requestIdOf,
    childLoggerFactory: requestLogger,
  });
  logRequestLines(app);
  sendRequestIds(app);
  sendSecurityHeaders(app);
  const metrics = new Metrics(deps.writer);
  registerErrorHandling(app, metrics, deps.config.publicUrl);
  await registerContracts(app);
  registerJsonBodyParser(app);
  refuseImpossiblePathParams(app);
  closeConnectionsWhenClosing(app);
  const retention = new RetentionSweep(
    deps.db,
    {
      retentionDays: deps.config.retentionDays,
      contentRetentionDays: deps.config.contentRetentionDays,
      intervalMs: deps.config.retentionIntervalMs,
    },
    deps.logger,
    deps.writer.deadLetterStore,
  );
  retention.start();
  // Before the onClose hooks, one of which closes the database the sweep works on.
  app.addHook('preClose', () => retention.stop());
  metrics.watchRetention(retention);
  registerHealthRoutes(app, deps, retention);
  registerMetricsRoute(app, metrics, deps.config.metricsToken);
  await registerUi(app, deps.config.uiPath);
  registerRootRedirect(app, deps.config.uiPath);
  // Outside the authenticated scope: the export link's token is its credential, on this route only.
  registerExportDownloadRoute(app, deps);
  const authenticator = new Authenticator(deps.db.db);
  // The live tail: fed by this node's writer, ended before the server waits for its requests to finish.
  const tails = new TailHub(deps.db, (credential) => authenticator.stillValid(credential), deps.logger, {
    maxClients: deps.config.tailMaxClients,
    keepaliveMs: deps.config.streamKeepaliveMs,
    queryTimeoutMs: deps.config.queryTimeoutMs,
  });
  const stopWaking = deps.writer.onCommitted(tails.wake);
  app.addHook('preClose', (done) => {
    stopWaking();
    tails.close();
    done();
  });
  const providerKeys = new ProviderKeyCache(deps.db.db, deps.secretKey);
  const providerKinds = deps.providerKinds ?? BUILT_IN_PROVIDER_KINDS;
  const tokens = new TokenCounter();
  app.addHook('onClose', () => tokens.close());
  const durations = new AudioDurations();
  app.addHook('onClose', () => durations.close());
  await app.register(async (scope) => {
    requireAuth(scope, authenticator);
    registerProviderKeyRoutes(scope, deps, providerKeys, providerKinds);
    registerProviderKindRoutes(scope, providerKinds);
    registerRequestLogRoutes(scope, deps);
    registerRequestLogStreamRoute(scope, tails);
    registerSummaryRoutes(scope, deps);
    registerFacetRoutes(scope, deps);
    registerExportRoutes(scope, deps);
    registerExportTokenRoute(scope, deps);
    registerEvaluatorRoutes(scope, deps);
    registerDatasetRoutes(scope, deps);
    registerViewRoutes(scope, deps);
    await registerOtelRoutes(scope, deps);
    const uploads = new UploadBudget(deps.config.uploadMemoryBytes);
    const breaker = new CircuitBreaker({
      failures: deps.config.circuitFailures ?? 0,
      cooldownMs: deps.config.circuitCooldownMs,
    });
    metrics.watchBreaker(breaker);
    const cache = new ResponseCache(deps.db.db, deps.config.cacheMaxBytes);
    app.addHook('onClose', () => cache.settled());
    metrics.watchCache(cache);
    const settings = new SettingsCache(deps.db.db);
    registerSettingsRoutes(scope, deps, settings, cache);
    const proxyDeps = {
      ...deps,
      providerKeys,
      providerKinds,
      tokens,
      durations,
      metrics,
      uploads,
      breaker,
      cache,
      settings,
    };
    registerEmbeddingRoutes(scope, proxyDeps);
    registerChatRoutes(scope, proxyDeps);
    registerAnthropicRoutes(scope, proxyDeps);
    registerResponsesRoutes(scope, proxyDeps);
    await registerTranscriptionRoutes(scope, proxyDeps);
  });
  return app;
}
