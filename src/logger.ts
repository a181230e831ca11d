/** The service log: JSON lines on stdout at GATELOG_LOG_LEVEL. */
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { LogLevel } from './config.js';

export function createLogger(level: LogLevel): FastifyBaseLogger {
  return pino({ level });
}
