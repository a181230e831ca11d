/** Token counting (src/gateway/tokens.ts): exact on ordinary text, linear on any text, stops at a limit. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTextTokens, type Encode, FORCED_CUT, measureTexts } from '../../src/gateway/tokens/tokens.js';
import { rng as createRng } from '../support/rng.js';

const enc = encode as Encode;
const direct = (text: string) => enc(text, { disallowedSpecial: new Set() }).length;

describe('token counting', () => {
  it('equals the tokenizer on ordinary text of every kind, whatever its length', () => {
    const rng = createRng(7);
    const words = ['the', 'Quick', 'brown,', 'fox', "it's", '42', '3.14159', 'naïve', '東京', '👩‍💻', '<|endoftext|>'];
    const gaps = [' ', '  ', '\t', '\n', ' \n ', '. ', '\r\n', '   '];
    for (let round = 0; round < 40; round++) {
      let text = '';
      const length = rng.int(1, 20_000);
      while (text.length < length) text += rng.pick(words) + rng.pick(gaps);
      assert.equal(countTextTokens(enc, text), direct(text), `round ${round}`);
    }
  });

  it('counts a run with no place to cut close to the tokenizer, in linear time', () => {
    for (const run of ['a'.repeat(FORCED_CUT * 8), 'ab1'.repeat(400), ' '.repeat(2000), '🙂'.repeat(700)]) {
      const exact = direct(run);
      const counted = countTextTokens(enc, run);
      const cuts = Math.ceil(run.length / FORCED_CUT);
      assert.ok(Math.abs(counted - exact) <= cuts, `${run.slice(0, 4)}…: ${counted} vs ${exact}`);
    }
    // 288,000 letters once took 28 s and overflowed the stack; a tenth of it timed, then all of it.
    const small = performance.now();
    countTextTokens(enc, 'x'.repeat(28_800));
    const smallMs = performance.now() - small;
    const large = performance.now();
    const tokens = countTextTokens(enc, 'x'.repeat(288_000));
    const largeMs = performance.now() - large;
    assert.ok(tokens > 8192);
    assert.ok(
      largeMs < Math.max(50, smallMs) * 30,
      `10× the text took ${largeMs.toFixed(0)} vs ${smallMs.toFixed(0)} ms`,
    );
  });

  it('stops once the limit is passed and says so', () => {
    const text = 'word '.repeat(100_000);
    const counted = countTextTokens(enc, text, 8192);
    assert.ok(counted > 8192 && counted < 8192 + 5000, String(counted));
    const measure = measureTexts(enc, ['short', text], { perText: 8192, total: 300_000 });
    assert.equal(measure.overText?.index, 1);
    const many = measureTexts(
      enc,
      Array.from({ length: 50 }, () => 'word '.repeat(8000)),
      {
        perText: 8192,
        total: 300_000,
      },
    );
    assert.equal(many.overText, null);
    assert.ok(many.overTotal !== null && many.overTotal > 300_000);
    const all = measureTexts(enc, ['hello world', 'again'], { perText: Infinity, total: Infinity, countAll: true });
    assert.equal(all.total, direct('hello world') + direct('again'));
  });
});
