/**
 * The batch schedule shared by the process's batching (the Redis store's and cache's `dataloader`s,
 * the embedded store's group commit): the batches of one event-loop turn are dispatched together in
 * its check phase (one `setImmediate`), after the poll phase has read every socket that had a
 * request.
 *
 * Dispatching them in one callback matters with an auto-pipelined Redis connection: ioredis sends
 * the commands queued in one callback in one socket write, but two `setImmediate` callbacks (one
 * per loader) would be two writes, as Node runs `process.nextTick` work between them.
 */
const dispatches: (() => void)[] = [];

function dispatchAll(): void {
  for (const dispatch of dispatches.splice(0)) dispatch();
}

export function dispatchAtEndOfTurn(dispatch: () => void): void {
  if (dispatches.length === 0) setImmediate(dispatchAll);
  dispatches.push(dispatch);
}
