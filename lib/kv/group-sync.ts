/**
 * Group commit: many writers wait for one fsync. A writer that has written its bytes asks for
 * `request()`; every request made before an fsync starts is covered by that fsync, and requests
 * arriving while one is in flight share the next one. So a burst of writes costs one fsync per
 * batch, not per write, and throughput holds while each writer still resolves only once its own
 * bytes are on disk.
 *
 * The fsync itself is asynchronous (libuv's thread pool: the event loop goes on serving requests
 * meanwhile, which is what fills the next group). It starts at the end of the event-loop turn
 * (`dispatchAtEndOfTurn`), after every request read in the turn has written, as the access store's
 * group commit does.
 *
 * A failed fsync is not retried: on Linux a failed fsync may already have dropped the dirty pages,
 * so a retry that succeeds proves nothing (PostgreSQL's "fsyncgate"). The group is refused with the
 * error and `failure` is kept; the journal refuses every later write until the process restarts
 * and reads back what the disk really holds.
 */
import { dispatchAtEndOfTurn } from '../batch/index.ts';

interface Group {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function newGroup(): Group {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

/** One fsync of what was written so far; calls `done` when it is over (with its error, if any). */
export type SyncFunction = (done: (err: Error | null) => void) => void;

export class GroupSync {
  private readonly sync: SyncFunction;
  /** Writes not yet covered by an fsync that has started: they wait here for the next one. */
  private waiting: Group | null = null;
  /** The fsync running now (its writers wait on it). */
  private running: Group | null = null;
  private scheduled = false;
  private done = 0;
  private failed: Error | null = null;

  constructor(sync: SyncFunction) {
    this.sync = sync;
  }

  /** fsyncs completed: tests check that the durable path is really taken. */
  get syncs(): number {
    return this.done;
  }

  /** The error of a failed fsync, after which nothing more may be written; null while all is well. */
  get failure(): Error | null {
    return this.failed;
  }

  /** True while an fsync runs (the journal keeps that file open until it ends). */
  get inFlight(): boolean {
    return this.running !== null;
  }

  /** After bytes were written: resolves once an fsync that started after the write has ended. */
  request(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    this.waiting ??= newGroup();
    this.schedule();
    return this.waiting.promise;
  }

  /** Resolves once everything written before the call is fsynced (at once when it is). */
  flushed(): Promise<void> {
    if (this.waiting) return this.waiting.promise;
    if (this.running) return this.running.promise;
    return this.failed ? Promise.reject(this.failed) : Promise.resolve();
  }

  /**
   * Everything written so far was made durable another way (a compaction's fsynced snapshot holds
   * it, or a synchronous fsync): the waiting writers are answered without an fsync of their own.
   */
  covered(): void {
    const group = this.waiting;
    this.waiting = null;
    group?.resolve();
  }

  private schedule(): void {
    // One fsync at a time: the next starts when the running one ends (see `finish`).
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    dispatchAtEndOfTurn(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    const group = this.waiting;
    if (!group || this.running) return;
    this.waiting = null;
    this.running = group;
    this.sync((err) => this.finish(group, err));
  }

  private finish(group: Group, err: Error | null): void {
    this.running = null;
    this.done++;
    if (err) {
      this.failed = err;
      group.reject(err);
      // Writers that came meanwhile are not covered either.
      const next = this.waiting;
      this.waiting = null;
      next?.reject(err);
      return;
    }
    group.resolve();
    if (this.waiting) this.schedule();
  }
}
