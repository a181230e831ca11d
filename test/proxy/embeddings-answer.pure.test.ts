import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWithoutVectors } from '../../src/gateway/embeddings/answer.js';

/** A base64 vector of `n` float32 values. */
const vector = (n: number) =>
  Buffer.from(new Float32Array(Array.from({ length: n }, (_, i) => i / 7)).buffer).toString('base64');

/** What a full parse gives, with each vector replaced by "" — what the slim parse must equal. */
function expectedSlim(text: string) {
  const full = JSON.parse(text) as { data: { embedding: string }[] };
  const bytes = full.data.map((d) => Buffer.from(d.embedding, 'base64').length);
  for (const d of full.data) d.embedding = '';
  return { parsed: full, vectorBytes: bytes };
}

const answer = (embeddings: string[], space = 0) =>
  JSON.stringify(
    {
      object: 'list',
      data: embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    },
    null,
    space,
  );

describe('parseWithoutVectors', () => {
  it('parses the answer around its base64 vectors and keeps their decoded sizes, whatever the padding and spacing', () => {
    // 1, 2 and 3 float32 values: 4, 8 and 12 bytes, i.e. base64 with two, one and no padding characters.
    for (const text of [
      answer([vector(1536)]),
      answer([vector(1), vector(2), vector(3)]),
      answer([vector(3), vector(256)], 2),
      '{"data":[{"embedding"  :\n "' + vector(2) + '", "object": "embedding"}]}',
    ]) {
      assert.deepEqual(parseWithoutVectors(Buffer.from(text)), expectedSlim(text), text.slice(0, 60));
    }
  });

  it('answers null for what it does not read, so the answer is parsed whole', () => {
    const floats = JSON.stringify({ data: [{ embedding: [0.1, 0.2] }] });
    const escaped = '{"data":[{"embedding":"AAAA\\/AAA"}]}';
    const notJson = '{"data":[{"embedding":"AAAA"}';
    // A key that ends like "embedding" outside data: its value is cut, the count of data's vectors differs.
    const lookAlike = '{"\\"embedding":"x","data":[]}';
    const emptyVector = '{"data":[{"embedding":""}]}';
    for (const text of [floats, escaped, notJson, lookAlike]) {
      assert.equal(parseWithoutVectors(Buffer.from(text)), null, text);
    }
    assert.deepEqual(parseWithoutVectors(Buffer.from(emptyVector)), {
      parsed: JSON.parse(emptyVector),
      vectorBytes: [0],
    });
  });

  it('reads an answer with no vectors as it is', () => {
    const text = '{"object":"list","data":[],"usage":{"prompt_tokens":1}}';
    assert.deepEqual(parseWithoutVectors(Buffer.from(text)), { parsed: JSON.parse(text), vectorBytes: [] });
  });
});
