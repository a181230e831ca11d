/**
 * A fake OpenAI upstream for load tests: embeddings answered at once with a fixed 1536-dimension
 * response (base64 or float, as asked); transcriptions read to the end (counted, not kept) and answered
 * with a fixed text. Run as its own process; prints its base URL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const vector = Array.from({ length: 1536 }, (_, i) => ((i * 7) % 97) / 97);
const base64 = Buffer.from(new Float32Array(vector).buffer).toString('base64');
const response = (embedding: unknown) =>
  Buffer.from(
    JSON.stringify({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding }],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    }),
  );
const bodies = { base64: response(base64), float: response(vector) };

const transcription = Buffer.from(JSON.stringify({ text: 'Hello world.' }));

const server = http.createServer((req, res) => {
  if ((req.url ?? '').endsWith('/audio/transcriptions')) {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-received-bytes': String(bytes) });
      res.end(transcription);
    });
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const asked = Buffer.concat(chunks).includes('"base64"') ? 'base64' : 'float';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(bodies[asked]);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`http://127.0.0.1:${port}/v1`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
