/** The trace view's tree (ui/src/lib/trace-tree.ts): order, depth, time axis, orphans and loops. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type TraceLog, traceTree } from '../../ui/src/lib/trace-tree.js';
import { formatScreen, parseScreen } from '../../ui/src/lib/screen.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');
function log(id: string, parent: string | null, startMs: number, endMs: number): TraceLog {
  return {
    unique_id: `log-${id}`,
    span_unique_id: id,
    span_parent_id: parent,
    span_name: id,
    log_type: 'task',
    model: '',
    timestamp: new Date(T0 + endMs).toISOString(),
    latency: (endMs - startMs) / 1000,
    status_code: 200,
    cost: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
  };
}

describe('web UI trace tree', () => {
  it('puts each span under its parent, children in start order, on the trace time axis', () => {
    const tree = traceTree([
      log('c2', 'b', 600, 1000),
      log('root', null, 0, 1000),
      log('b', 'root', 100, 1000),
      log('c1', 'b', 200, 500),
    ]);
    assert.deepEqual(
      tree.rows.map((r) => [r.name, r.depth]),
      [
        ['root', 0],
        ['b', 1],
        ['c1', 2],
        ['c2', 2],
      ],
    );
    assert.equal(tree.durationMs, 1000);
    const c1 = tree.rows[2]!;
    assert.equal(c1.left, 0.2);
    assert.equal(c1.width, 0.3);
  });

  it('shows a span whose parent is missing as a root, and a loop once', () => {
    const tree = traceTree([log('x', 'gone', 0, 10), log('p', 'q', 0, 10), log('q', 'p', 5, 10)]);
    assert.deepEqual(tree.rows.map((r) => r.name).sort(), ['p', 'q', 'x']);
    assert.equal(tree.rows.find((r) => r.name === 'x')!.depth, 0);
    assert.deepEqual(traceTree([]).rows, []);
  });

  it('reads and writes the trace screen in the URL', () => {
    assert.deepEqual(parseScreen('?v=trace&id=abc'), { kind: 'trace', id: 'abc' });
    assert.deepEqual(parseScreen('?v=trace'), { kind: 'logs' });
    assert.equal(formatScreen({ kind: 'trace', id: 'abc' }), '?v=trace&id=abc');
  });
});
