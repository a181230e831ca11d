/**
 * The multipart form a transcription sends its provider: the OpenAI fields and the file, written from
 * the chunks the upload arrived in (never joined into one Buffer). Either whole, once the call has been
 * read (with its length), or as it arrives (ArrivingForm: the file first, the fields once they are known).
 */
import crypto from 'node:crypto';
import { PassThrough } from 'node:stream';

/** The file part of an upstream form: its name and type as the provider should read them. */
export interface UpstreamFile {
  filename: string;
  contentType: string;
}

const newBoundary = () => `gatelog-${crypto.randomBytes(16).toString('hex')}`;

export const formContentType = (boundary: string) => `multipart/form-data; boundary=${boundary}`;

/** Names and values of a form are sent as given; quotes and line breaks in a name are escaped as browsers do. */
const quoted = (text: string) => text.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/** A text part, with the line break that ends it. */
const fieldPart = (boundary: string, name: string, value: string) =>
  Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`);

/** A file part's headers; its bytes follow, then FILE_END. */
const filePartHead = (boundary: string, file: UpstreamFile) =>
  Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(file.filename)}"\r\n` +
      `Content-Type: ${file.contentType}\r\n\r\n`,
  );

const FILE_END = Buffer.from('\r\n');

const formEnd = (boundary: string) => Buffer.from(`--${boundary}--\r\n`);

/** The whole form, fields first, with its exact length so that the provider gets a Content-Length. */
export function wholeForm(
  fields: readonly [string, string][],
  file: UpstreamFile,
  chunks: readonly Buffer[],
): { boundary: string; length: number; parts: Buffer[] } {
  const boundary = newBoundary();
  const parts: Buffer[] = fields.map(([name, value]) => fieldPart(boundary, name, value));
  parts.push(filePartHead(boundary, file), ...chunks, FILE_END, formEnd(boundary));
  let length = 0;
  for (const part of parts) length += part.length;
  return { boundary, length, parts };
}

/**
 * A form written while its file arrives: the file's part first, its chunks as they come, then the
 * fields once the whole call has been read and found valid (complete). Abandoned by destroying `body`,
 * so that the provider never receives it whole.
 */
export class ArrivingForm {
  readonly boundary = newBoundary();
  readonly body = new PassThrough();

  constructor(
    readonly file: UpstreamFile,
    chunksSoFar: readonly Buffer[],
  ) {
    // Whoever reads the body (the upstream client) sees its failure; an abandoned one has no reader.
    this.body.on('error', () => {});
    this.body.write(filePartHead(this.boundary, file));
    for (const chunk of chunksSoFar) this.body.write(chunk);
  }

  /** Passes on one more chunk of the file (kept by the caller too: no copy is made). */
  chunk(chunk: Buffer): void {
    if (!this.body.destroyed) this.body.write(chunk);
  }

  /** Ends the form with these fields; false when it was abandoned meanwhile. */
  complete(fields: readonly [string, string][]): boolean {
    if (this.body.destroyed || this.body.writableEnded) return false;
    this.body.write(FILE_END);
    for (const [name, value] of fields) this.body.write(fieldPart(this.boundary, name, value));
    this.body.end(formEnd(this.boundary));
    return true;
  }
}
