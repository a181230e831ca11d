/**
 * GET /docs: the API reference as one HTML page served by gatelog itself (no CDN, no script): the guide
 * of docs/api.md, then every route of the OpenAPI document with its parameters and schemas. Nothing is
 * written twice: the prose lives in docs/api.md, the route details in the route contracts.
 */
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { Marked, type Tokens } from 'marked';
import { z } from 'zod';

const GUIDE = new URL('../../../../docs/api.md', import.meta.url);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

/** GitHub's heading anchors, so the guide's own links (#filter-language) work on the page too. */
const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

const markdown = new Marked({
  renderer: {
    heading(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Heading) {
      return `<h${token.depth} id="${slug(token.text)}">${this.parser.parseInline(token.tokens)}</h${token.depth}>\n`;
    },
  },
});

const escape = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

function schemaBlock(title: string, schema: unknown): string {
  if (schema === undefined) return '';
  return `<details><summary>${escape(title)}</summary><pre>${escape(JSON.stringify(schema, null, 2))}</pre></details>`;
}

function operationHtml(method: string, path: string, op: Operation): string {
  const params = (op.parameters ?? [])
    .map(
      (p) =>
        `<tr><td><code>${escape(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : ''}</td>` +
        `<td>${escape(p.description ?? '')}</td></tr>`,
    )
    .join('');
  const body = Object.values(op.requestBody?.content ?? {})[0]?.schema;
  const responses = Object.entries(op.responses ?? {})
    .map(
      ([status, r]) => schemaBlock(`${status} answer`, Object.values(r.content ?? {})[0]?.schema) || `<p>${status}</p>`,
    )
    .join('');
  return `<section class="route" id="${method}-${escape(path)}">
<h3><span class="method">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
<p>${escape(op.summary ?? '')}</p>${op.description ? `<p>${escape(op.description)}</p>` : ''}
${params ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Meaning</th></tr>${params}</table>` : ''}
${schemaBlock('Request body', body)}${responses}
</section>`;
}

function page(openapi: { paths?: Record<string, Record<string, Operation>> }): string {
  const guide = markdown.parse(fs.readFileSync(GUIDE, 'utf8'), { async: false });
  const routes = Object.entries(openapi.paths ?? {})
    .flatMap(([path, ops]) => METHODS.filter((m) => ops[m]).map((m) => operationHtml(m, path, ops[m])))
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>gatelog API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f5f5f7;padding:.75rem;overflow:auto}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d2d2d7;padding:.25rem .5rem;text-align:left;vertical-align:top}
.route{border-top:1px solid #d2d2d7;padding-top:.5rem}.method{font-weight:700;color:#0a58ca}
</style></head><body>
${guide}
<h2 id="routes-and-schemas">Routes and schemas</h2>
<p>From the OpenAPI document at <a href="/api/openapi.json"><code>/api/openapi.json</code></a>.</p>
${routes}
</body></html>`;
}

export function registerDocsPage(app: FastifyInstance): void {
  let html = '';
  const schema = {
    tags: ['Service'],
    summary: 'This reference as an HTML page (no key needed)',
    security: [],
    response: { 200: z.string().describe('HTML') },
  };
  app.get('/docs', { schema }, async (_request, reply) =>
    reply.header('content-type', 'text/html; charset=utf-8').send(html),
  );
  // Built before the server listens, once every route is registered (the OpenAPI document lists them):
  // the first caller does not hold the main thread for everyone.
  app.addHook('onReady', async () => {
    html = page(app.swagger() as Parameters<typeof page>[0]);
  });
}
