/**
 * The web UI: static files built by Vite (ui/, `npm run build`) into dist/web and served by gatelog
 * itself under GATELOG_UI_PATH (/ui by default), with nothing loaded from anywhere else.
 *
 * - `index.html` is never cached (a new build is picked up at once); the hashed files under assets/
 *   are cached as immutable, served precompressed (brotli or gzip) when the browser takes it.
 * - A strict Content-Security-Policy: scripts, styles and calls to gatelog only, no inline code.
 * - The page finds the API relative to itself (a `gatelog-api-root` meta tag written here), so that
 *   gatelog can sit behind a reverse proxy under any path prefix.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError, notFound } from '../../errors.js';
import { ErrorEnvelope } from '../plumbing/schemas.js';

const UI_ROOT = fileURLToPath(new URL('../../../web/', import.meta.url));

export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

interface IndexPage {
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
}

/** index.html with the API's place written in, compressed once: it is small and served often. */
function readIndex(uiPath: string): IndexPage | null {
  let html: string;
  try {
    html = fs.readFileSync(path.join(UI_ROOT, 'index.html'), 'utf8');
  } catch {
    return null;
  }
  const depth = uiPath.split('/').length - 1;
  const meta = `<meta name="gatelog-api-root" content="${'../'.repeat(depth)}api/" />`;
  const identity = Buffer.from(html.replace('<head>', `<head>\n    ${meta}`));
  return { identity, gzip: zlib.gzipSync(identity), br: zlib.brotliCompressSync(identity) };
}

function sendIndex(index: IndexPage, request: FastifyRequest, reply: FastifyReply) {
  const accepted = String(request.headers['accept-encoding'] ?? '');
  const encoding = /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : null;
  reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('vary', 'accept-encoding');
  if (encoding) reply.header('content-encoding', encoding);
  return reply.send(encoding ? index[encoding] : index.identity);
}

export async function registerUi(app: FastifyInstance, uiPath: string | null): Promise<void> {
  if (uiPath === null) return;
  const index = readIndex(uiPath);
  const notBuilt = () =>
    new AppError(503, 'ui_not_built', 'The web UI is not built: run `npm run build` (npm start does it).');
  await app.register(async (scope) => {
    await scope.register(fastifyStatic, {
      root: UI_ROOT,
      serve: false,
      preCompressed: true,
      maxAge: '365d',
      immutable: true,
      index: false,
    });
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(UI_SECURITY_HEADERS);
      return payload;
    });
    const page = {
      tags: ['Web UI'],
      summary: 'The web UI (a page for browsers; /ui redirects to /ui/)',
      security: [],
      response: {
        200: z.string().describe('HTML'),
        302: z.string().describe('redirect to the path with a slash'),
        503: ErrorEnvelope,
      },
    };
    scope.get(uiPath, { schema: page }, async (request, reply) => {
      const [pathname, query] = request.url.split(/\?(.*)/s, 2);
      // Relative asset URLs need the trailing slash: /ui/assets/x.js, not /assets/x.js.
      if (!pathname.endsWith('/')) return reply.redirect(`${pathname}/${query ? `?${query}` : ''}`, 302);
      if (!index) throw notBuilt();
      return sendIndex(index, request, reply);
    });
    const asset = {
      tags: ['Web UI'],
      summary: "The web UI's scripts and styles (hashed names, cached as immutable)",
      security: [],
      params: z.object({ file: z.string() }),
      response: { 200: z.string().describe('a script, a style sheet or an image'), 404: ErrorEnvelope },
    };
    scope.get(`${uiPath}/assets/:file`, { schema: asset }, async (request, reply) => {
      const { file } = request.params as { file: string };
      // A name only: an encoded slash must not reach outside assets/.
      const bad = file.includes('/') || file.includes('\\') || file.startsWith('.');
      // Checked here: @fastify/static's own not-found path would reach the 405 of a known route.
      if (bad || !fs.existsSync(path.join(UI_ROOT, 'assets', file))) throw notFound('No such file.');
      return reply.sendFile(path.posix.join('assets', file));
    });
  });
}
