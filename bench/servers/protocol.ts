/** Messages between the bench (parent) and a server child it forked (over the IPC channel). */

/** Child → parent, once listening. */
export interface ReadyMessage {
  type: 'ready';
  url: string;
  /** The admin token (API servers only). */
  adminToken?: string;
}

/** Child → parent, the answer to a `memory` request (after a full GC when the child has --expose-gc). */
export interface MemoryMessage {
  type: 'memory';
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Shipments the embedded normalizer knows (embedded API only). */
  shipments?: number;
}

/** Child → parent, the answer to a `cpu` request: process.cpuUsage() so far, in microseconds. */
export interface CpuMessage {
  type: 'cpu';
  user: number;
  system: number;
}

export type ChildMessage = ReadyMessage | MemoryMessage | CpuMessage;
export type ParentMessage = { type: 'memory' } | { type: 'cpu' } | { type: 'stop' };

/** Replies to `memory` and `cpu` requests and stops on `stop` (or when the parent goes away). */
export function serveParent(stop: () => Promise<void>, extra: () => Partial<MemoryMessage> = () => ({})): void {
  const send = (message: ChildMessage) => process.send?.(message);
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (err: unknown) => { console.error(err); process.exit(1); },
    );
  };
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stop') shutdown();
    else if (message.type === 'cpu') send({ type: 'cpu', ...process.cpuUsage() });
    else if (message.type === 'memory') {
      // A full GC, then a second one a moment later: V8 hands freed pages back to the OS on a
      // background thread after a GC, so reading at once would count pages already let go.
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      setTimeout(() => {
        gc?.();
        const m = process.memoryUsage();
        send({ type: 'memory', rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, ...extra() });
      }, 1_000);
    }
  });
  process.on('disconnect', shutdown);
  process.on('SIGTERM', shutdown);
}
