/**
 * The live-tail clients of the tail-cpu bench, in a process of their own (so that reading them costs the
 * load generator nothing): opens N tails of GET /api/request-logs/stream/, prints "ready" once all are
 * open, reads and counts their events, and prints "events <count>" when asked with SIGTERM, then exits.
 *
 *   node tail-readers.js BASE_URL KEY N [QUERY]
 */
import http from 'node:http';

const [baseUrl, key, n, query = ''] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
let events = 0;
let open = 0;

function openTail(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${baseUrl}/api/request-logs/stream/${query}`, {
      agent,
      headers: { authorization: `Bearer ${key}` },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`tail answered ${res.statusCode}`));
      open += 1;
      // Counting `event: log` lines is all a reader does here: the cost measured is the server's.
      res.on('data', (chunk: Buffer) => {
        let at = chunk.indexOf('event: log');
        while (at >= 0) {
          events += 1;
          at = chunk.indexOf('event: log', at + 10);
        }
      });
      res.on('close', () => (open -= 1));
      resolve();
    });
    req.on('error', reject);
  });
}

await Promise.all(Array.from({ length: Number(n) }, () => openTail()));
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  process.stdout.write(`events ${events} open ${open}\n`, () => process.exit(0));
});
