/**
 * The web UI's pure pieces behind the explorer's fit and its refusals: costs at three significant
 * digits (unknown prices never read as $0), the filter field list kept equal to the server's registry,
 * "did you mean" by edit distance, and URL quick filters passed on and read as the API reads them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOG_FIELDS } from '../../src/filters/registry.js';
import { costText, UNKNOWN_COST } from '../../ui/src/lib/format.js';
import {
  editDistance,
  FILTER_FIELDS,
  fieldsInMessage,
  isKnownField,
  nearestField,
} from '../../ui/src/lib/filter-fields.js';
import { formatViewState, listRequest, parseViewState, quickAsConditions } from '../../ui/src/lib/view-state.js';

describe('web UI costs', () => {
  it('keeps three significant digits at every size, without exponents', () => {
    const cases: [number, string][] = [
      [0.0158, '$0.0158'],
      [0.01584, '$0.0158'],
      [12.3, '$12.3'],
      [12.34, '$12.3'],
      [0.000123, '$0.000123'],
      [0.0000001234, '$0.000000123'],
      [1.5, '$1.50'],
      [0.1, '$0.100'],
      [0.009999, '$0.0100'],
      [99.95, '$100'],
      [123.4, '$123'],
      [1234.5, '$1,235'],
      [0, '$0'],
    ];
    for (const [cost, text] of cases) assert.equal(costText(cost), text, String(cost));
  });

  it('reads in the order costs sort', () => {
    const costs = [0.000123, 0.0009, 0.00158, 0.0158, 0.02, 0.158, 1.58, 12.3, 158];
    const digits = costs.map((c) => Number(costText(c).replace(/[$,]/g, '')));
    assert.deepEqual(
      digits,
      [...digits].sort((a, b) => a - b),
    );
    // The old two-decimal form read $0.0158 and $0.02 alike, cost-sorted rows out of order to the eye.
    assert.notEqual(costText(0.0158), costText(0.02));
  });

  it('shows an unknown price as unknown, never as $0', () => {
    assert.equal(costText(null), UNKNOWN_COST);
    assert.equal(costText(undefined), UNKNOWN_COST);
    assert.notEqual(UNKNOWN_COST, '$0');
  });
});

describe('web UI filter fields', () => {
  it('knows exactly the fields the server filters on', () => {
    assert.deepEqual([...FILTER_FIELDS].sort(), [...LOG_FIELDS.fields.keys(), 'search'].sort());
  });

  it('suggests the nearest field for a slip, and nothing for a stranger', () => {
    assert.equal(editDistance('modle', 'model'), 1, 'a swap of neighbours is one edit');
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(nearestField('modle'), 'model');
    assert.equal(nearestField('Model'), 'model');
    assert.equal(nearestField('costt'), 'cost');
    assert.equal(nearestField('latncy'), 'latency');
    assert.equal(nearestField('customer_identifer'), 'customer_identifier');
    assert.equal(nearestField('banana'), null);
    assert.ok(isKnownField('metadata__anything'));
    assert.ok(isKnownField('scores__3f1c'));
    assert.ok(!isKnownField('metadata__'));
    assert.ok(!isKnownField('modle'));
  });

  it("reads the field list out of the API's unknown-field message", () => {
    const message = "Unknown filter field 'modle'; filterable: model, cost, metadata__<key>, scores__<evaluator_id>.";
    assert.deepEqual(fieldsInMessage(message), ['model', 'cost']);
    assert.equal(fieldsInMessage('Something else.'), null);
  });
});

describe('web UI URL quick filters', () => {
  it('keeps unknown page parameters and passes them on to the list call', () => {
    const state = parseViewState('?range=24h&modle=gpt-4o&model[value]=x&model[operator]=not&page_size=9');
    assert.deepEqual(state.quick, [
      ['modle', 'gpt-4o'],
      ['model[value]', 'x'],
      ['model[operator]', 'not'],
    ]);
    const q = new URLSearchParams(listRequest(state, Date.now(), 50).query);
    assert.equal(q.get('modle'), 'gpt-4o');
    assert.equal(q.get('model[operator]'), 'not');
    assert.equal(q.get('page_size'), '50', "the list's own parameters are never taken from the page");
    assert.equal(parseViewState(formatViewState(state)).quick?.length, 3);
    assert.equal(parseViewState('?range=24h').quick, undefined);
  });

  it('reads them as the API does when they become body filters', () => {
    assert.deepEqual(
      quickAsConditions(
        [
          ['modle', 'gpt-4o'],
          ['model[value]', 'x'],
          ['model[operator]', 'not'],
          ['metadata__feature', 'chat'],
        ],
        FILTER_FIELDS,
      ),
      [
        { field: 'metadata__modle', operator: '', values: ['gpt-4o'] },
        { field: 'model', operator: 'not', values: ['x'] },
        { field: 'metadata__feature', operator: '', values: ['chat'] },
      ],
    );
  });
});
