import type { FastifyInstance } from 'fastify';

/**
 * Closing the API with keep-alive clients: once close() begins, every answer still to be sent
 * says `Connection: close`, so the connection it travels on ends with it. Fastify closes the
 * connections idle at that moment and answers requests arriving later 503 with that header, but
 * the answer to a request already in flight went out keep-alive: its connection then sat idle
 * until the client or keepAliveTimeout (65 s) ended it, and close() waited for it past the
 * runner's 30 s deadline (SIGTERM under load exited 1, test/sigterm.services.test.ts).
 */
export function registerDrain(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => { closing = true; });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('Connection', 'close');
  });
}
