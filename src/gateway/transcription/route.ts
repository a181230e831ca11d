/**
 * POST /api/audio/transcription(s) (docs/api.md "Speech-to-text proxy"): how a transcription call is read,
 * sent upstream and answered; core/lifecycle.ts runs the rest of its life (key, timing, errors, its one log).
 * The upload is kept once, as the chunks it arrived in, and sent upstream from them.
 */
import { Readable } from 'node:stream';
import { AppError } from '../../errors.js';
import { AUDIO_MIME_TYPES, type AudioFormat, detectAudioFormat, upstreamFilename } from './audio-format.js';
import {
  type ChunkWatcher,
  type Form,
  formBytes,
  type FormPart,
  readForm,
  type UploadedFile,
} from './multipart-form.js';
import { takePlatformParams } from '../core/platform-params.js';
import { dispatchEarly } from '../core/early-upload.js';
import type { ProxiedRoute } from '../core/contract.js';
import type { ProxiedCall } from '../core/call.js';
import { requestBreakdown } from '../core/record.js';
import { reportUsage } from '../core/usage.js';
import { breakdownHeader, transcriptOf, upstreamSeconds } from './answer.js';
import type { UploadBudget } from './upload-budget.js';
import {
  fileHead,
  HEAD_BYTES,
  MAX_AUDIO_BYTES,
  parseTranscriptionRequest,
  type TranscriptionRequest,
} from './request.js';
import { ArrivingForm, formContentType, type UpstreamFile, wholeForm } from './upstream-form.js';
import { attemptedModel } from '../../logs/indexed-text.js';

/** The parts of a multipart request, as @fastify/multipart yields them while the upload arrives. */
export type TranscriptionInput = AsyncIterable<FormPart>;

interface PreparedTranscription {
  /** Where the file's bytes were taken from, given back when the call is over. */
  uploads: UploadBudget;
  request: TranscriptionRequest;
  /**
   * Seconds of audio, read from the file (null when it could not be) while the call goes upstream: a
   * long MP3 without a frame index is read frame by frame, which should not delay the call.
   */
  duration: Promise<number | null>;
  /** The text fields sent upstream, in order. */
  upstreamFields: [string, string][];
  file: UpstreamFile;
  /** The form already on its way upstream while the file arrived, if it could start (see watchForEarlyStart). */
  arriving: ArrivingForm | null;
}

/** Content types that say nothing about the file: the format's own is sent instead. */
const GENERIC_TYPES = new Set([
  '',
  'application/octet-stream',
  'binary/octet-stream',
  'application/x-www-form-urlencoded',
  // What the multipart parser reports for a part without a Content-Type (the form's default).
  'text/plain',
]);

const JSON_FORMATS = new Set(['json', 'verbose_json']);

const UPSTREAM_PATH = '/audio/transcriptions';

/**
 * Sent with every call: a form sent while it arrives is under way before its response_format is known,
 * so one Accept serves every call.
 */
const ACCEPT = 'application/json, text/plain, */*';

/** The text formats' answers (text, srt, vtt), passed back besides JSON (upstream-client.ts). */
const TEXT_TYPES = ['text/plain', 'text/vtt', 'application/x-subrip'];

/**
 * The file as the provider gets it: the name with the format's extension when it lacks it, and the
 * client's content type unless it says nothing about the file.
 */
function upstreamFile(file: Pick<UploadedFile, 'filename' | 'mimetype'>, format: AudioFormat): UpstreamFile {
  const given = file.mimetype.split(';')[0].trim().toLowerCase();
  return {
    filename: upstreamFilename(file.filename, format),
    contentType: GENERIC_TYPES.has(given) ? AUDIO_MIME_TYPES[format] : file.mimetype,
  };
}

/**
 * Starts the call upstream as soon as the file's first bytes show it is audio, so that the upload travels
 * on while it arrives (the OpenAI client sends the file before model and the other fields). Not when the
 * call carries customer_credentials before the file (its key is not the registered one), when the file
 * is known only by its name (it must first read as that format), or when it is not the form's first
 * file. What follows still decides: a refused call's form is abandoned before it ends (core/tries.ts).
 */
function watchForEarlyStart(call: ProxiedCall): { watch: ChunkWatcher; arriving: () => ArrivingForm | null } {
  let decided = false;
  let arriving: ArrivingForm | null = null;
  const watch: ChunkWatcher = (form, file, chunk) => {
    if (arriving !== null) return arriving.chunk(chunk);
    if (decided || file.bytes < HEAD_BYTES) return;
    decided = true;
    if (file.field !== 'file' || form.files.length > 0 || Object.hasOwn(form.fields, 'customer_credentials')) return;
    const detected = detectAudioFormat(fileHead(file), file.filename);
    if (detected === null || !detected.sniffed) return;
    const started = new ArrivingForm(upstreamFile(file, detected.format), file.chunks);
    arriving = started;
    const request = {
      path: UPSTREAM_PATH,
      contentType: formContentType(started.boundary),
      body: started.body,
      accept: ACCEPT,
      answerTypes: TEXT_TYPES,
    };
    void dispatchEarly(call, 'openai', request).then((ok) => {
      if (ok) return;
      started.body.destroy();
      if (arriving === started) arriving = null;
    });
  };
  return { watch, arriving: () => arriving };
}

export const transcriptionRoute: ProxiedRoute<PreparedTranscription> = {
  logType: 'transcription',
  providerRoute: 'transcription',
  model: (prepared) => prepared.request.model,

  async prepare(call, input) {
    const early = watchForEarlyStart(call);
    const limits = { maxFileBytes: MAX_AUDIO_BYTES, maxFiles: 1, budget: call.deps.uploads };
    const form = await readForm(input as TranscriptionInput, limits, early.watch);
    try {
      const prepared = await prepareForm(call, form);
      prepared.arriving = early.arriving();
      return prepared;
    } catch (err) {
      call.deps.uploads.give(formBytes(form));
      throw err;
    }
  },

  release(prepared) {
    prepared.uploads.give(prepared.request.file.bytes);
  },

  upstreamCall(prepared, model) {
    const fields =
      model === prepared.request.model
        ? prepared.upstreamFields
        : prepared.upstreamFields.map(([name, value]): [string, string] =>
            name === 'model' ? [name, model] : [name, value],
          );
    const form = wholeForm(fields, prepared.file, prepared.request.file.chunks);
    return {
      path: UPSTREAM_PATH,
      contentType: formContentType(form.boundary),
      contentLength: form.length,
      body: Readable.from(form.parts, { objectMode: false }),
      accept: ACCEPT,
      answerTypes: TEXT_TYPES,
    };
  },

  completeEarly(prepared) {
    const { arriving, file } = prepared;
    if (arriving === null) return false;
    // The same file part as the prepared call's (it is: both read the same first bytes).
    if (arriving.file.filename !== file.filename || arriving.file.contentType !== file.contentType) return false;
    return arriving.complete(prepared.upstreamFields);
  },

  // Priced by the second of audio: a budget holds what the file's length costs (read before the call is
  // admitted, while its upload already travels upstream).
  demand: ({ duration }) => ({ prompt: 0, maxOutputTokens: 0, audioSeconds: duration }),

  async settle(prepared, call) {
    const seconds = await prepared.duration;
    const input = call.log.input as { file: { duration_seconds: number | null } };
    input.file.duration_seconds = seconds;
    call.log.audio_duration ??= seconds;
  },

  async answer(prepared, upstream, call) {
    const { request } = prepared;
    const { log } = call;
    const raw = upstream.body.toString('utf8');
    let parsed: Record<string, unknown> | null = null;
    if (JSON_FORMATS.has(request.responseFormat)) {
      try {
        const value: unknown = JSON.parse(raw);
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
          parsed = value as Record<string, unknown>;
        }
      } catch {
        // not JSON: refused below
      }
      if (parsed === null) {
        throw new AppError(502, 'upstream_invalid_response', 'The provider answered with a body that is not JSON.');
      }
    }
    const seconds = upstreamSeconds(parsed) ?? (await prepared.duration);
    log.audio_duration = seconds;
    log.transcript = parsed ? (typeof parsed.text === 'string' ? parsed.text : null) : transcriptOf(raw, request);
    log.output = parsed ?? raw;
    // Priced by the second of audio.
    await reportUsage(call, {
      model: call.provider?.model ?? request.model,
      usage: null,
      texts: null,
      generationSeconds: null,
      audioSeconds: seconds ?? 0,
    });
    if (!call.params.requestBreakdown) {
      return { response: { status: 200, contentType: upstream.contentType, body: upstream.body } };
    }
    const breakdown = requestBreakdown(call, fullRequest(prepared));
    if (parsed) {
      parsed.request_breakdown = breakdown;
      return { response: { status: 200, contentType: 'application/json', body: JSON.stringify(parsed) } };
    }
    return {
      response: {
        status: 200,
        contentType: upstream.contentType,
        body: upstream.body,
        headers: { 'x-request-breakdown': breakdownHeader(breakdown) },
      },
    };
  },
};

/** The call's form, read whole → what goes upstream; the log learns each part as it is checked. */
async function prepareForm(call: ProxiedCall, form: Form): Promise<PreparedTranscription> {
  const { fields } = form;
  const { log } = call;
  log.model = attemptedModel(fields.model);
  call.params = takePlatformParams(fields);
  const request = parseTranscriptionRequest(form);
  log.model = request.model;
  const duration = call.deps.durations.read(request.file.chunks, request.file.bytes, request.format);
  // A file known only by its name must read as that format before it goes anywhere.
  if (!request.sniffed && (await duration) === null) {
    throw new AppError(
      400,
      'invalid_file_format',
      `The file is named .${request.format} but cannot be read as ${request.format} audio.`,
      'file',
    );
  }
  log.input = {
    model: request.model,
    file: {
      filename: request.file.filename,
      format: request.format,
      bytes: request.file.bytes,
      duration_seconds: null as number | null,
    },
    language: request.language ?? null,
    prompt: request.prompt ?? null,
    response_format: request.responseFormat,
    temperature: request.temperature ?? null,
    timestamp_granularities: request.granularities ?? null,
  };
  const upstreamFields: [string, string][] = [['model', request.model]];
  if (request.language !== undefined) upstreamFields.push(['language', request.language]);
  if (request.prompt !== undefined) upstreamFields.push(['prompt', request.prompt]);
  upstreamFields.push(['response_format', request.responseFormat]);
  if (request.temperature !== undefined) upstreamFields.push(['temperature', String(request.temperature)]);
  for (const g of request.granularities ?? []) upstreamFields.push(['timestamp_granularities[]', g]);
  return {
    uploads: call.deps.uploads,
    request,
    duration,
    upstreamFields,
    file: upstreamFile(request.file, request.format),
    arriving: null,
  };
}

/** The request as it went upstream, the file described rather than included. */
function fullRequest(prepared: PreparedTranscription): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  for (const [name, value] of prepared.upstreamFields) {
    if (name === 'timestamp_granularities[]') {
      ((request.timestamp_granularities ??= []) as string[]).push(value);
    } else request[name] = name === 'temperature' ? Number(value) : value;
  }
  request.file = {
    filename: prepared.file.filename,
    bytes: prepared.request.file.bytes,
    format: prepared.request.format,
  };
  return request;
}
