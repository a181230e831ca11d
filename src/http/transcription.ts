/**
 * POST /api/audio/transcription and /api/audio/transcriptions (the path the official OpenAI client calls),
 * also under /v1/: the OpenAI speech-to-text API, proxied and logged (docs/api.md "Speech-to-text proxy").
 *
 * The routes live in a scope of their own where multipart is the only body parser: the upload is read
 * as it streams (@fastify/multipart), and any other body reaches the handler refused, so that the call
 * is logged before its 415.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { AppError, RejectedBody } from '../errors.js';
import type { ProxyDeps } from '../gateway/core/deps.js';
import { transcriptionRoute } from '../gateway/transcription/route.js';
import { TranscriptionAnswer, TranscriptionBody } from '../gateway/transcription/contract.js';
import { MAX_AUDIO_BYTES } from '../gateway/transcription/request.js';
import { proxiedHandler } from './proxied-call.js';
import { proxiedRoute } from './proxy-routes.js';
import { LOGGED_CALL_ERRORS } from './logged-call.js';
import { proxiedErrors, validatedByHandler } from './plumbing/schemas.js';

/** Under /api/ and /v1/ (proxy-routes.ts). */
export const TRANSCRIPTION_PATHS = ['/audio/transcription', '/audio/transcriptions'] as const;

/** Text fields are short (a prompt, a metadata object); a form has no reason to hold many. */
const MAX_FIELD_BYTES = 1024 * 1024;
const MAX_FIELDS = 200;

const notMultipart = () =>
  new RejectedBody(
    new AppError(
      415,
      'unsupported_media_type',
      'Send the audio as a multipart/form-data upload with a file part named file ' +
        '(as the OpenAI client does with fs.createReadStream).',
    ),
  );

export async function registerTranscriptionRoutes(app: FastifyInstance, deps: ProxyDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(multipart, {
      // One byte more than gatelog accepts, so that the form reader sees the file pass its limit and
      // answers 413 itself (the parser only truncates).
      limits: {
        fileSize: MAX_AUDIO_BYTES + 1,
        files: 2,
        fields: MAX_FIELDS,
        parts: MAX_FIELDS + 2,
        fieldSize: MAX_FIELD_BYTES,
      },
    });
    // Any other body is accepted unread, so that the handler logs the call before its 415.
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    // A form refused before its end (a field that is not allowed, a file past its limit) is answered at
    // once; the rest of its body is then read and dropped, unparsed, so that the connection's next
    // request is read in its turn (else it would wait behind the unread bytes, never answered). Node's
    // requestTimeout bounds how long a caller may keep sending.
    scope.addHook('onResponse', async (request) => {
      if (!request.raw.complete) {
        request.raw.unpipe();
        request.raw.resume();
      }
    });

    const handle = proxiedHandler(deps, transcriptionRoute);
    for (const path of TRANSCRIPTION_PATHS) {
      const schema = {
        tags: ['Proxy'],
        summary:
          'Transcribe audio through the provider; the call is logged (docs/api.md "Speech-to-text proxy")' +
          (path.endsWith('s') ? '' : ' — the same as /api/audio/transcriptions'),
        consumes: ['multipart/form-data'],
        produces: ['application/json', 'text/plain'],
        body: validatedByHandler(TranscriptionBody),
        response: { 200: TranscriptionAnswer, ...proxiedErrors(...LOGGED_CALL_ERRORS) },
      };
      proxiedRoute(scope, 'POST', path, { schema }, (request, reply) => {
        return handle(request, reply, request.isMultipart() ? request.parts() : notMultipart());
      });
    }
  });
}
