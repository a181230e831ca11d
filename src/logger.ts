/** The service log: JSON lines on stdout at GATELOG_LOG_LEVEL. */
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
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
