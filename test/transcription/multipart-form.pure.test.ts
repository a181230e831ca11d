import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { type FormPart, readForm, setField } from '../../src/gateway/transcription/multipart-form.js';
import { UploadBudget } from '../../src/gateway/transcription/upload-budget.js';

async function* partsOf(...parts: FormPart[]): AsyncIterable<FormPart> {
  for (const part of parts) yield part;
}

const filePart = (file: Readable, fieldname = 'file'): FormPart => ({
  type: 'file',
  fieldname,
  filename: 'a.wav',
  mimetype: 'audio/wav',
  file,
});

describe('the speech-to-text form reader', () => {
  it('nests bracket names, lists repeated ones, and refuses names that reach Object.prototype', () => {
    const fields: Record<string, unknown> = {};
    setField(fields, 'metadata[a]', '1');
    setField(fields, 'metadata[b][c]', '2');
    setField(fields, 'customer_credentials[openai][api_key]', 'sk-x');
    setField(fields, 'timestamp_granularities[]', 'word');
    setField(fields, 'timestamp_granularities[]', 'segment');
    setField(fields, 'prompt', 'one');
    setField(fields, 'prompt', 'two');
    setField(fields, 'toString', 'own');
    assert.deepEqual(fields, {
      metadata: { a: '1', b: { c: '2' } },
      customer_credentials: { openai: { api_key: 'sk-x' } },
      timestamp_granularities: ['word', 'segment'],
      prompt: ['one', 'two'],
      toString: 'own',
    });
    for (const name of ['__proto__[polluted]', 'constructor[prototype][polluted]', 'a[__proto__]']) {
      assert.throws(
        () => setField({}, name, 'x'),
        (e: AppError) => e.status === 400 && e.param === name,
      );
    }
    assert.throws(
      () => setField({ metadata: 'text' }, 'metadata[a]', 'x'),
      (e: AppError) => e.status === 400,
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('refuses, and does not wait forever for, a file the parser destroyed before it was read', async () => {
    // As @fastify/multipart does: its own listener takes the error, then the consumer comes later.
    const file = new Readable({ read() {} }).on('error', () => {});
    file.destroy(new Error('Part terminated early'));
    await new Promise((resolve) => setImmediate(resolve));
    const budget = new UploadBudget(1000);
    await assert.rejects(
      readForm(partsOf(filePart(file)), { maxFileBytes: 100, maxFiles: 1, budget }),
      (e: AppError) => e.status === 400 && e.code === 'invalid_multipart',
    );
    const closed = new Readable({ read() {} });
    closed.destroy();
    await assert.rejects(readForm(partsOf(filePart(closed)), { maxFileBytes: 100, maxFiles: 1, budget }));
  });

  it('keeps the chunks as they came, and gives the budget back when a file passes its limit', async () => {
    const budget = new UploadBudget(1000);
    const chunks = [Buffer.alloc(30, 1), Buffer.alloc(30, 2)];
    const form = await readForm(partsOf(filePart(Readable.from(chunks))), { maxFileBytes: 100, maxFiles: 1, budget });
    assert.equal(form.files[0].bytes, 60);
    assert.equal(form.files[0].chunks[0], chunks[0], 'the same Buffer, not a copy');
    assert.equal(budget.bytesHeld, 60);
    budget.give(60);

    const big = Readable.from([Buffer.alloc(60), Buffer.alloc(60), Buffer.alloc(60)]);
    await assert.rejects(
      readForm(partsOf(filePart(big)), { maxFileBytes: 100, maxFiles: 1, budget }),
      (e: AppError) => e.status === 413,
    );
    assert.equal(budget.bytesHeld, 0);

    const small = new UploadBudget(50);
    await assert.rejects(
      readForm(partsOf(filePart(Readable.from(chunks))), { maxFileBytes: 100, maxFiles: 1, budget: small }),
      (e: AppError) => e.status === 503 && e.code === 'upload_memory_full',
    );
    assert.equal(small.bytesHeld, 0);
  });
});
