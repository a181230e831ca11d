/**
 * Reads a proxied call's multipart form (docs/api.md "Speech-to-text proxy"): its text fields, with the
 * bracket names the official OpenAI client writes (`metadata[a]`, `customer_credentials[openai][api_key]`,
 * `timestamp_granularities[]`) made into objects and arrays, and its one file kept as the chunks it
 * arrived in (never joined: it is sent upstream from the same chunks). Parts may come in any order.
 */
import { finished } from 'node:stream/promises';
import { AppError } from '../../errors.js';
import type { UploadBudget } from './upload-budget.js';

/** A file part's content as the parser streams it; `truncated` once it passed the parser's own limit. */
export type FormPartFile = NodeJS.ReadableStream & { truncated?: boolean };

/** One part of a form as the multipart parser yields it (@fastify/multipart's shape, narrowed). */
export type FormPart =
  | { type: 'field'; fieldname: string; value: unknown; valueTruncated?: boolean }
  | {
      type: 'file';
      fieldname: string;
      filename: string;
      mimetype: string;
      file: FormPartFile;
    };

export interface UploadedFile {
  /** The form field it came in. */
  field: string;
  filename: string;
  /** The content type the client gave the part. */
  mimetype: string;
  chunks: Buffer[];
  bytes: number;
}

export interface Form {
  fields: Record<string, unknown>;
  files: UploadedFile[];
}

export interface FormLimits {
  /** The largest file; past it, 413 at once (the rest of the upload is not kept). */
  maxFileBytes: number;
  maxFiles: number;
  /** What all calls' files may hold at once: each chunk kept is taken from it (see formBytes). */
  budget: UploadBudget;
}

/** The bytes a form's files hold, to give back to the budget once the call is over. */
export const formBytes = (form: Form) => form.files.reduce((sum, f) => sum + f.bytes, 0);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `a[b][c]` → ['a', 'b', 'c']; `a[]` → ['a', '']; `a` → ['a']. A name that is not of that shape is kept whole. */
export function bracketPath(name: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
  if (!match) return [name];
  const rest = [...match[2].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]);
  return [match[1], ...rest];
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** What an object holds under `key` itself (never what it inherits, such as toString). */
const own = (target: Record<string, unknown>, key: string) => (Object.hasOwn(target, key) ? target[key] : undefined);

/** Places one field's value at its bracket path; a name given twice becomes a list of its values. */
export function setField(fields: Record<string, unknown>, name: string, value: unknown): void {
  const path = bracketPath(name);
  // `__proto__[x]` would otherwise reach Object.prototype through the plain objects built here.
  if (path.some((key) => FORBIDDEN_KEYS.has(key))) {
    throw new AppError(400, 'invalid_value', `The form field name ${name} is not allowed.`, name);
  }
  let target: Record<string, unknown> = fields;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    const next = path[i + 1];
    if (next === '' && i + 1 === path.length - 1) {
      // `key[]`: one more item of a list.
      const list = own(target, key);
      if (Array.isArray(list)) list.push(value);
      else if (list === undefined) target[key] = [value];
      else throw conflictingField(name);
      return;
    }
    const child = own(target, key);
    if (child === undefined) target[key] = {};
    else if (!isObject(child)) throw conflictingField(name);
    target = target[key] as Record<string, unknown>;
  }
  const key = path[path.length - 1];
  if (key === '') throw conflictingField(name);
  const existing = own(target, key);
  if (existing === undefined) target[key] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else if (isObject(existing)) throw conflictingField(name);
  else target[key] = [existing, value];
}

const conflictingField = (name: string) =>
  new AppError(400, 'invalid_value', `The form field ${name} conflicts with another field of the same name.`, name);

/** Told of each chunk of a file as it is kept, with the form read so far (its fields before the file). */
export type ChunkWatcher = (form: Form, file: UploadedFile, chunk: Buffer) => void;

/**
 * Reads every part. A file past `maxFileBytes` is refused with 413 as soon as it is: what was kept of it
 * is let go, and the parser is left discarding the rest.
 */
export async function readForm(
  parts: AsyncIterable<FormPart>,
  limits: FormLimits,
  watch?: ChunkWatcher,
): Promise<Form> {
  const form: Form = { fields: {}, files: [] };
  /** Bytes taken from the budget so far, given back if the form is refused. */
  let taken = 0;
  try {
    for await (const part of parts) {
      if (part.type === 'field') {
        if (part.valueTruncated) {
          const message = `The form field ${part.fieldname} is longer than this endpoint accepts.`;
          throw new AppError(400, 'invalid_value', message, part.fieldname);
        }
        setField(form.fields, part.fieldname, part.value);
        continue;
      }
      if (form.files.length >= limits.maxFiles) {
        part.file.resume();
        throw new AppError(400, 'invalid_value', `The form holds more than ${limits.maxFiles} file.`, part.fieldname);
      }
      const file: UploadedFile = {
        field: part.fieldname,
        filename: part.filename,
        mimetype: part.mimetype,
        chunks: [],
        bytes: 0,
      };
      taken += await readFile(part.file, file, limits, watch && ((f, chunk) => watch(form, f, chunk)));
      if (part.file.truncated) throw tooLarge(limits.maxFileBytes);
      form.files.push(file);
    }
  } catch (err) {
    limits.budget.give(taken);
    throw formError(err, limits);
  }
  return form;
}

/**
 * Keeps a file's chunks as they come ('data' events hand over each chunk as it is; async iteration
 * would join whatever is buffered into a new Buffer, a copy of the upload). Resolves to the bytes taken
 * from the budget; on a refusal, the stream is left flowing so the parser discards the rest. Its end is
 * awaited with `finished`, which also settles for a stream the parser destroyed before this was called
 * (a form cut short): listening for 'end' and 'error' then would wait forever.
 */
async function readFile(
  stream: FormPartFile,
  file: UploadedFile,
  limits: FormLimits,
  watch?: (file: UploadedFile, chunk: Buffer) => void,
): Promise<number> {
  let taken = 0;
  let refusal: unknown = null;
  const onData = (chunk: Buffer) => {
    if (refusal !== null) return;
    if (file.bytes + chunk.length > limits.maxFileBytes) {
      refusal = tooLarge(limits.maxFileBytes);
    } else {
      try {
        limits.budget.take(chunk.length);
        taken += chunk.length;
        file.bytes += chunk.length;
        file.chunks.push(chunk);
        watch?.(file, chunk);
        return;
      } catch (err) {
        refusal = err;
      }
    }
    // Refused: let go of what was kept, and answer now while the parser discards the rest.
    file.chunks.length = 0;
    abandon();
  };
  let abandon: () => void = () => {};
  const refused = new Promise<void>((resolve) => (abandon = resolve));
  stream.on('data', onData);
  const ended = finished(stream);
  // A refused file's stream may still fail after the answer: nobody waits for it then.
  ended.catch(() => {});
  try {
    await Promise.race([ended, refused]);
  } catch (err) {
    refusal ??= err;
  }
  if (refusal !== null) {
    limits.budget.give(taken);
    throw refusal;
  }
  return taken;
}

const tooLarge = (max: number) =>
  new AppError(
    413,
    'file_too_large',
    `The file is larger than ${max / (1024 * 1024)} MB, the most this endpoint accepts.`,
    'file',
  );

/** The multipart parser's failures in the envelope. */
function formError(err: unknown, limits: FormLimits): AppError {
  if (err instanceof AppError) return err;
  const code = (err as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(limits.maxFileBytes);
  if (code === 'FST_FILES_LIMIT') {
    return new AppError(400, 'invalid_value', `The form holds more than ${limits.maxFiles} file.`, null);
  }
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new AppError(400, 'invalid_value', 'The form holds too many fields.', null);
  }
  return new AppError(
    400,
    'invalid_multipart',
    `The body is not a readable multipart form: ${(err as Error).message ?? String(err)}.`,
    null,
    {},
    err,
  );
}
