/** The service log: JSON lines on stdout at GATELOG_LOG_LEVEL. */
import { pino } from 'pino';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { LogLevel } from './config.js';

/**
 * Secrets a logged object may carry, replaced before a line is written: the Authorization header (a
 * gatelog key, or a provider key on its way upstream) wherever headers are logged — @fastify/multipart
 * logs its parser's options, the request's headers among them, at trace level — and customer_credentials.
 */
const REDACT = {
  paths: [
    'headers.authorization',
    '*.headers.authorization',
    '*.*.headers.authorization',
    'headers.cookie',
    '*.headers.cookie',
    'customer_credentials',
    '*.customer_credentials',
  ],
  censor: '[redacted]',
};

/** `destination` (tests) receives each line instead of stdout. */
export function createLogger(level: LogLevel, destination?: { write(line: string): void }): FastifyBaseLogger {
  const options = { level, redact: REDACT };
  return destination ? pino(options, destination) : pino(options);
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<FastifyBaseLogger['info']>;
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
/** pino's loggers, which say whether a level is written. */
type LevelAware = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger whose pino child (the request id bound) is made only once a line at an enabled
 * level is written. Making it costs ~2% of the event loop at full load — the bindings go through the
 * redaction of every wildcard path — and below the level nothing is written, so at GATELOG_LOG_LEVEL=warn
 * most requests never need one.
 */
class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: LevelAware,
    private readonly bindings: Bindings,
  ) {}

  private get instance(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings));
  }

  private write(level: Level, args: LogArgs): void {
    if (this.made === null && !this.parent.isLevelEnabled(level)) return;
    const instance = this.instance;
    (instance[level] as (...a: LogArgs) => void).apply(instance, args);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.instance.level = level;
  }
  fatal(...args: LogArgs): void {
    this.write('fatal', args);
  }
  error(...args: LogArgs): void {
    this.write('error', args);
  }
  warn(...args: LogArgs): void {
    this.write('warn', args);
  }
  info(...args: LogArgs): void {
    this.write('info', args);
  }
  debug(...args: LogArgs): void {
    this.write('debug', args);
  }
  trace(...args: LogArgs): void {
    this.write('trace', args);
  }
  silent(): void {}
  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.instance.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: a RequestLogger, unless the route sets its own level or serializers. */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  // Checked field by field: this runs for every request, and Object.keys would allocate each time.
  const own = options.level !== undefined || options.serializers !== undefined;
  if (own || typeof (logger as Partial<LevelAware>).isLevelEnabled !== 'function')
    return logger.child(bindings, options);
  return new RequestLogger(logger as LevelAware, bindings);
}

/**
 * One service log line per request, when it is answered: method, path (without the query, which may
 * hold an export link's token), status and time. A proxied model call's line is at `debug`: its log in
 * gatelog is the record, and at `info` a busy gateway would otherwise write a line per call.
 */
export function logRequestLines(app: FastifyInstance): void {
  const service = app.log as LevelAware;
  app.addHook('onResponse', (request, reply, done) => {
    const level = request.routeOptions.config?.proxiedPath === undefined ? 'info' : 'debug';
    // Below the level (a proxied call at info), nothing is built: this runs on every call.
    if (!service.isLevelEnabled(level)) return done();
    request.log[level](
      {
        method: request.method,
        path: request.url.split('?')[0],
        statusCode: reply.statusCode,
        responseTime: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
    done();
  });
}
