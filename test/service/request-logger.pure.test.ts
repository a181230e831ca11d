/** The request logger: its lines carry the request id and go through redaction; below the level it makes no child. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger, requestLogger } from '../../src/logger.js';

function capture(level: 'info' | 'warn') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, { write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

describe('the request logger', () => {
  it('writes lines at or above the level with the request id bound, secrets redacted', () => {
    const { logger, lines } = capture('info');
    const log = requestLogger(logger, { reqId: 'r-1' }, {});
    log.debug('not written');
    log.info({ customer_credentials: { openai: { api_key: 'sk-secret' } } }, 'first');
    log.error({ err: new Error('boom') }, 'second');
    log.child({ part: 'upload' }).warn('third');
    assert.deepEqual(
      lines.map((l) => [l.msg, l.reqId, l.level]),
      [
        ['first', 'r-1', 30],
        ['second', 'r-1', 50],
        ['third', 'r-1', 40],
      ],
    );
    assert.equal(lines[0].customer_credentials, '[redacted]');
    assert.equal((lines[1].err as { message: string }).message, 'boom');
    assert.equal(lines[2].part, 'upload');
    assert.equal(log.level, 'info');
  });

  it('makes no child while nothing reaches the level', () => {
    const { logger, lines } = capture('warn');
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = (...args: Parameters<typeof logger.child>) => {
      children += 1;
      return child(...args);
    };
    const log = requestLogger(logger, { reqId: 'r-2' }, {});
    log.info('below');
    log.debug('below');
    assert.equal(children, 0);
    log.warn('at');
    log.error('above');
    assert.equal(children, 1);
    assert.deepEqual(
      lines.map((l) => [l.msg, l.reqId]),
      [
        ['at', 'r-2'],
        ['above', 'r-2'],
      ],
    );
  });

  it('takes a level of its own when set, and honours it', () => {
    const { logger, lines } = capture('warn');
    const log = requestLogger(logger, { reqId: 'r-3' }, {});
    log.level = 'debug';
    log.debug('now written');
    assert.deepEqual(
      lines.map((l) => [l.msg, l.reqId]),
      [['now written', 'r-3']],
    );
    assert.equal(logger.level, 'warn');
  });
});
