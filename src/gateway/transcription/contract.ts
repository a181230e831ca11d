/**
 * The contract of POST /api/audio/transcription(s) for the OpenAPI document: OpenAI's multipart request
 * with the platform parameters beside it, and its answers in every response format (the test suite
 * also checks answers against OpenAI's own published schemas). request.ts is what
 * enforces the request: a refused call must be logged before its 400, so the route validates in its
 * handler.
 */
import { z } from 'zod';
import { AUDIO_FORMATS } from './audio-format.js';
import { PlatformParamsSchema } from '../core/platform-params.js';
import { MAX_AUDIO_BYTES, RESPONSE_FORMATS, TIMESTAMP_GRANULARITIES } from './request.js';

export const TranscriptionBody = z.object({
  file: z
    .string()
    .meta({ format: 'binary' })
    .describe(
      `The audio, as a file part (not its name): ${AUDIO_FORMATS.join(', ')}; at most ` +
        `${MAX_AUDIO_BYTES / (1024 * 1024)} MB. The format is read from its bytes, then its name.`,
    ),
  model: z.literal('whisper-1'),
  language: z.string().optional().describe('ISO-639-1 code of the speech, e.g. en'),
  prompt: z.string().optional().describe('Text to guide the style, or the transcript of the audio before'),
  response_format: z.enum(RESPONSE_FORMATS).optional().describe('Default json; text, srt and vtt answer text/plain'),
  temperature: z.number().min(0).max(1).optional(),
  'timestamp_granularities[]': z
    .array(z.enum(TIMESTAMP_GRANULARITIES))
    .optional()
    .describe('verbose_json only; also accepted as timestamp_granularities'),
  ...PlatformParamsSchema,
});

const breakdown = z
  .record(z.string(), z.unknown())
  .optional()
  .describe('With request_breakdown=true: the call as gatelog logged it (docs/api.md "Platform parameters")');

const Segment = z.looseObject({
  id: z.number().int(),
  seek: z.number().int(),
  start: z.number(),
  end: z.number(),
  text: z.string(),
  tokens: z.array(z.number().int()),
  temperature: z.number(),
  avg_logprob: z.number(),
  compression_ratio: z.number(),
  no_speech_prob: z.number(),
});

const Word = z.looseObject({ word: z.string(), start: z.number(), end: z.number() });

const TranscriptionJson = z
  .looseObject({
    text: z.string(),
    usage: z.looseObject({ type: z.string() }).optional(),
    request_breakdown: breakdown,
  })
  .describe('response_format json (application/json)');

const TranscriptionVerboseJson = z
  .looseObject({
    language: z.string(),
    duration: z.number().describe('Seconds of audio'),
    text: z.string(),
    segments: z.array(Segment).optional().describe('With the segment granularity'),
    words: z.array(Word).optional().describe('With the word granularity'),
    request_breakdown: breakdown,
  })
  .describe('response_format verbose_json (application/json)');

export const TranscriptionAnswer = z.union([
  TranscriptionVerboseJson,
  TranscriptionJson,
  z
    .string()
    .describe(
      'response_format text, srt or vtt (text/plain); with request_breakdown=true the breakdown is in the ' +
        'X-Request-Breakdown header, as JSON',
    ),
]);
