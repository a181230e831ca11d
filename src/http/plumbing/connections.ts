/**
 * Connection handling at shutdown and after a 413 (docs/api.md "Errors", "Durability and visibility").
 *
 * - Once the server stops accepting (SIGTERM), every answer carries `Connection: close`, so a keep-alive
 *   client cannot hold the process open by sending one more request, and each connection closes as its
 *   answer ends.
 * - A body over the limit is answered 413 while the client may still be sending. Closing then would
 *   reset the connection under the client (which sees EPIPE, not the 413), so the rest of the body is
 *   read and discarded, up to DRAIN_LIMIT_BYTES; beyond that the connection is closed.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How much of a refused body is read and discarded before the connection is closed. */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

export function closeConnectionsWhenClosing(app: FastifyInstance): void {
  // Node closes idle keep-alive connections when the server closes, but not one that never sent a
  // request (a client that opened it ahead of use): such a connection would hold shutdown until the
  // headers timeout. Those are ended at close.
  const sockets = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  app.addHook('preClose', (done) => {
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 413 && !request.raw.complete) {
      // Fastify closes the connection after a refused body; it stays open while the rest is drained.
      reply.removeHeader('connection');
      drainRefusedBody(request.raw, reply.raw);
    }
    if (!app.server.listening) reply.header('connection', 'close');
    done(null, payload);
  });
}

function drainRefusedBody(body: NodeJS.ReadableStream & { destroy(): void }, response: { destroy(): void }) {
  let drained = 0;
  body.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT_BYTES) response.destroy();
  });
  body.resume();
}
