/** The service log: JSON lines on stdout at GATELOG_LOG_LEVEL. */
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { LogLevel } from './config.js';

/** `destination` (tests) receives each line instead of stdout. */
export function createLogger(level: LogLevel, destination?: { write(line: string): void }): FastifyBaseLogger {
  return destination ? pino({ level }, destination) : pino({ level });
}
