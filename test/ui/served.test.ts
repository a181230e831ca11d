/**
 * How gatelog serves the web UI's files: the page never cached, hashed assets immutable and
 * precompressed, a strict Content-Security-Policy, nothing outside the build reachable, the entry chunk
 * within its size budget, the path configurable or switched off.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { startApp } from '../support/harness.js';

const WEB = fileURLToPath(new URL('../../web/', import.meta.url));
const entryScript = () => {
  const html = fs.readFileSync(path.join(WEB, 'index.html'), 'utf8');
  return /src="\.\/assets\/([^"]+\.js)"/.exec(html)![1];
};

describe('web UI files', () => {
  it('serves the page uncached with a strict CSP, and assets immutable, precompressed', async () => {
    const t = await startApp();
    try {
      const redirect = await request(`${t.baseUrl}/ui?x=1`);
      assert.equal(redirect.statusCode, 302);
      assert.equal(redirect.headers.location, '/ui/?x=1');
      await redirect.body.dump();

      const page = await request(`${t.baseUrl}/ui/`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['content-encoding'], 'gzip');
      assert.equal(page.headers['cache-control'], 'no-cache');
      const csp = String(page.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self';/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
      const html = zlib.gunzipSync(Buffer.from(await page.body.arrayBuffer())).toString();
      assert.match(html, /<meta name="gatelog-api-root" content="\.\.\/api\/" \/>/);
      assert.doesNotMatch(html, /<script>|<style>|https?:\/\//, 'no inline code, nothing from elsewhere');

      const script = entryScript();
      const br = await request(`${t.baseUrl}/ui/assets/${script}`, { headers: { 'accept-encoding': 'br' } });
      assert.equal(br.statusCode, 200);
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(String(br.headers['content-type']), /javascript/);
      const body = zlib.brotliDecompressSync(Buffer.from(await br.body.arrayBuffer()));
      assert.deepEqual(body, fs.readFileSync(path.join(WEB, 'assets', script)));

      const plain = await request(`${t.baseUrl}/ui/assets/${script}`);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal((await plain.body.arrayBuffer()).byteLength, body.length);

      for (const outside of ['..%2Findex.html', '..%2F..%2Fsrc%2Fmain.js', '.build-stamp', 'missing.js']) {
        const res = await request(`${t.baseUrl}/ui/assets/${outside}`);
        assert.equal(res.statusCode, 404, outside);
        assert.equal(((await res.body.json()) as { error: { code: string } }).error.code, 'not_found');
      }
    } finally {
      await t.close();
    }
  });

  it('keeps the entry chunk within 60 KB gzipped', () => {
    const gzipped = fs.statSync(path.join(WEB, 'assets', `${entryScript()}.gz`)).size;
    assert.ok(gzipped <= 60 * 1024, `${gzipped} bytes`);
  });

  it('serves the UI under GATELOG_UI_PATH, finding the API from any depth, or not at all when off', async () => {
    const nested = await startApp({ env: { GATELOG_UI_PATH: '/tools/gatelog/' } });
    try {
      const page = await request(`${nested.baseUrl}/tools/gatelog/`);
      assert.equal(page.statusCode, 200);
      assert.match(await page.body.text(), /content="\.\.\/\.\.\/api\/"/);
      const old = await request(`${nested.baseUrl}/ui/`);
      assert.equal(old.statusCode, 404);
      await old.body.dump();
    } finally {
      await nested.close();
    }
    const off = await startApp({ env: { GATELOG_UI_PATH: 'off' } });
    try {
      const res = await request(`${off.baseUrl}/ui/`);
      assert.equal(res.statusCode, 404);
      await res.body.dump();
    } finally {
      await off.close();
    }
  });
});
