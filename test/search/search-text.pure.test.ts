/**
 * The search text of a log (src/logs/search/search-text.ts): the strings of a JSON field cut short read
 * as JSON.parse would read them whole, as far as they go; each field's prefix; a value said twice kept
 * once; what no database text may hold stored as a space.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prefixJsonStrings } from '../../src/logs/search/json-prefix-strings.js';
import { fieldPrefix, SEARCH_FIELD_CHARS, type SearchSource, searchText } from '../../src/logs/search/search-text.js';
import { searchTerms } from '../../src/filters/search-terms.js';

const source = (fields: Partial<SearchSource>): SearchSource => ({
  input: null,
  output: null,
  prompt_messages: null,
  completion_message: null,
  tool_calls: null,
  error_message: null,
  ...fields,
});

/** Every string value of a JSON value, in document order (what the scanner must find). */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

describe('search text', () => {
  it('reads the strings of a cut JSON text, keys left out, escapes decoded', () => {
    const value = {
      messages: [
        { role: 'user', content: 'quote " backslash \\ tab \t nul \u0000 é 🙂' },
        { role: 'assistant', content: [{ type: 'text', text: 'nested' }], n: 3, ok: true, none: null },
      ],
      'key with "quotes"': 'value: with, punctuation {]',
      empty: '',
    };
    const json = JSON.stringify(value);
    // Whole, it reads what JSON.parse gives.
    assert.deepEqual(prefixJsonStrings(json), { strings: strings(value), lastCut: false });
    // Cut at every point: the strings before the cut whole, the one it ends inside as far as it goes.
    for (let cut = 0; cut < json.length; cut++) {
      const { strings: found, lastCut } = prefixJsonStrings(json.slice(0, cut));
      const all = strings(value);
      const whole = found.slice(0, lastCut ? -1 : undefined);
      assert.deepEqual(whole, all.slice(0, whole.length), `cut at ${cut}`);
      if (lastCut) assert.ok(all[whole.length].startsWith(found.at(-1)!), `cut at ${cut}: ${found.at(-1)}`);
    }
  });

  it('searches the first SEARCH_FIELD_CHARS characters of each field, counted in code points', () => {
    const emoji = '🙂'.repeat(SEARCH_FIELD_CHARS);
    assert.deepEqual(fieldPrefix(emoji), { text: emoji, cut: false });
    assert.deepEqual(fieldPrefix(`${emoji}x`), { text: emoji, cut: true });
    const long = `"start ${'a'.repeat(SEARCH_FIELD_CHARS)} end"`;
    const text = searchText(source({ input: long, error_message: `error ${'b'.repeat(SEARCH_FIELD_CHARS)} late` }));
    assert.ok(text.startsWith('start '));
    assert.ok(!text.includes('end') && !text.includes('late'));
    assert.ok(text.includes('\nerror b'), 'every field has its own prefix');
  });

  it('keeps a value said twice once, the longer prefix of a cut one', () => {
    const answer = `the answer ${'x'.repeat(SEARCH_FIELD_CHARS)}`;
    const text = searchText(
      source({
        input: JSON.stringify([{ role: 'user', content: 'question' }]),
        prompt_messages: JSON.stringify([
          { role: 'user', content: 'question' },
          { role: 'system', content: 'be brief' },
        ]),
        output: JSON.stringify({ id: 'chatcmpl-1', choices: [{ message: { role: 'assistant', content: answer } }] }),
        completion_message: JSON.stringify({ role: 'assistant', content: answer }),
      }),
    );
    const lines = text.split('\n');
    assert.deepEqual(
      lines.filter((l) => !l.startsWith('the answer')),
      ['user', 'question', 'chatcmpl-1', 'assistant', 'system', 'be brief'],
    );
    const answers = lines.filter((l) => l.startsWith('the answer'));
    assert.equal(answers.length, 1);
    const inCompletion = SEARCH_FIELD_CHARS - JSON.stringify({ role: 'assistant', content: '' }).length + 2;
    assert.equal(answers[0].length, inCompletion, 'the longer prefix: completion_message has less JSON around it');
  });

  it('stores NUL and lone surrogates as spaces, in the text and the terms alike', () => {
    const text = searchText(source({ input: JSON.stringify('before\u0000after \ud800lone pair 🙂') }));
    assert.equal(text, 'before after  lone pair 🙂');
    assert.deepEqual(searchTerms('BEFORE\u0000after'), ['before', 'after']);
  });
});
