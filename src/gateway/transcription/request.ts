/**
 * Validation of a speech-to-text call (docs/api.md "Speech-to-text proxy"): the form's fields, once the
 * platform parameters are taken out, must be OpenAI's transcription fields with values whisper-1 accepts,
 * and its file one of the accepted audio formats. Every refusal names its field.
 */
import { AppError } from '../../errors.js';
import { type AudioFormat, AUDIO_FORMATS, detectAudioFormat } from './audio-format.js';
import type { Form, UploadedFile } from './multipart-form.js';

export const TRANSCRIPTION_MODELS = ['whisper-1'] as const;
export const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];
export const TIMESTAMP_GRANULARITIES = ['word', 'segment'] as const;
/** The provider's limit on an audio file. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

/** The fields OpenAI's transcription API takes for whisper-1 (stream only as false: whisper-1 does not stream). */
export const TRANSCRIPTION_FIELDS = [
  'file',
  'model',
  'language',
  'prompt',
  'response_format',
  'temperature',
  'timestamp_granularities',
  'stream',
] as const;

export interface TranscriptionRequest {
  model: string;
  file: UploadedFile;
  format: AudioFormat;
  /** false when the format was taken from the name alone (the bytes said nothing). */
  sniffed: boolean;
  language: string | undefined;
  prompt: string | undefined;
  responseFormat: ResponseFormat;
  temperature: number | undefined;
  granularities: (typeof TIMESTAMP_GRANULARITIES)[number][] | undefined;
}

const invalid = (param: string, message: string, code = 'invalid_value') => new AppError(400, code, message, param);

const LANGUAGE_NAMES = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** A single text value of a form field (a field given twice, or as an object, is refused). */
function text(fields: Record<string, unknown>, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(name, `${name} must be given once, as text.`);
  return value;
}

/** How many of a file's first bytes say which container it is. */
export const HEAD_BYTES = 64;

/** The first bytes of the file, enough to recognize its container. */
export function fileHead(file: Pick<UploadedFile, 'chunks'>): Buffer {
  const first = file.chunks[0];
  if (first.length >= HEAD_BYTES || file.chunks.length === 1) return first;
  // Only as many chunks as the first 64 bytes span: never a copy of the whole upload.
  const leading: Buffer[] = [];
  let bytes = 0;
  for (const chunk of file.chunks) {
    if (bytes >= HEAD_BYTES) break;
    leading.push(chunk);
    bytes += chunk.length;
  }
  return Buffer.concat(leading).subarray(0, HEAD_BYTES);
}

export function parseTranscriptionRequest(form: Form): TranscriptionRequest {
  const { fields, files } = form;
  const allowed = new Set<string>(TRANSCRIPTION_FIELDS);
  for (const name of Object.keys(fields)) {
    if (!allowed.has(name)) {
      throw invalid(name, `${name} is not a field of the transcription API.`, 'unknown_parameter');
    }
  }
  const file = parseFile(fields, files);

  const model = text(fields, 'model');
  if (model === undefined || model === '') throw invalid('model', 'model is required: whisper-1.');
  if (!(TRANSCRIPTION_MODELS as readonly string[]).includes(model)) {
    throw invalid(
      'model',
      `model must be whisper-1; ${JSON.stringify(model)} is not a transcription model gatelog serves.`,
    );
  }

  const detected = detectAudioFormat(fileHead(file), file.filename);
  if (detected === null) {
    throw invalid(
      'file',
      `The file is not audio in an accepted format (${AUDIO_FORMATS.join(', ')}): neither its bytes nor its name ` +
        `(${JSON.stringify(file.filename)}) say which.`,
      'invalid_file_format',
    );
  }

  let language = text(fields, 'language');
  if (language !== undefined) {
    language = language.toLowerCase();
    if (!/^[a-z]{2}$/.test(language) || LANGUAGE_NAMES.of(language) === undefined) {
      throw invalid('language', 'language must be a two-letter ISO-639-1 code, such as "en".');
    }
  }

  const responseFormat = text(fields, 'response_format') ?? 'json';
  if (!(RESPONSE_FORMATS as readonly string[]).includes(responseFormat)) {
    throw invalid('response_format', `response_format must be one of ${RESPONSE_FORMATS.join(', ')}.`);
  }

  const temperatureText = text(fields, 'temperature');
  let temperature: number | undefined;
  if (temperatureText !== undefined) {
    temperature = temperatureText.trim() === '' ? NaN : Number(temperatureText);
    if (!Number.isFinite(temperature) || temperature < 0 || temperature > 1) {
      throw invalid('temperature', 'temperature must be a number from 0 to 1.');
    }
  }

  const granularities = parseGranularities(fields.timestamp_granularities, responseFormat as ResponseFormat);

  const stream = text(fields, 'stream');
  if (stream !== undefined && !['false', '0'].includes(stream)) {
    throw invalid('stream', 'whisper-1 does not stream its transcription: leave stream out, or send false.');
  }

  return {
    model,
    file,
    format: detected.format,
    sniffed: detected.sniffed,
    language,
    prompt: text(fields, 'prompt'),
    responseFormat: responseFormat as ResponseFormat,
    temperature,
    granularities,
  };
}

function parseFile(fields: Record<string, unknown>, files: readonly UploadedFile[]): UploadedFile {
  const misplaced = files.find((f) => f.field !== 'file');
  if (misplaced) throw invalid(misplaced.field, `${misplaced.field} must be a text field; only file holds the audio.`);
  if (fields.file !== undefined) {
    throw invalid('file', 'file must be the audio content, uploaded as a file part, not a text field.');
  }
  const file = files[0];
  if (file === undefined) throw invalid('file', 'file is required: the audio content, as a file part.');
  if (file.bytes === 0) throw invalid('file', 'file is empty.');
  return file;
}

function parseGranularities(
  value: unknown,
  responseFormat: ResponseFormat,
): TranscriptionRequest['granularities'] | undefined {
  if (value === undefined) return undefined;
  const list = Array.isArray(value) ? value : [value];
  // A JSON list in one field (as some clients send it) reads as the list.
  const items =
    list.length === 1 && typeof list[0] === 'string' && list[0].trim().startsWith('[') ? jsonList(list[0]) : list;
  const allowed = TIMESTAMP_GRANULARITIES as readonly unknown[];
  if (items.length === 0 || !items.every((v) => allowed.includes(v))) {
    throw invalid('timestamp_granularities', 'timestamp_granularities must be word, segment, or both.');
  }
  if (responseFormat !== 'verbose_json') {
    throw invalid('timestamp_granularities', 'timestamp_granularities needs response_format verbose_json.');
  }
  return [...new Set(items)] as TranscriptionRequest['granularities'];
}

function jsonList(textValue: string): unknown[] {
  try {
    const parsed: unknown = JSON.parse(textValue);
    return Array.isArray(parsed) ? parsed : [textValue];
  } catch {
    return [textValue];
  }
}
