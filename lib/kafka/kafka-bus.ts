import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import type { BusHealth, PollBus } from '../bus/index.ts';
import type { CarrierPoll, KeyMode } from '../schemas/index.ts';
import { SECOND_MS } from '../time/index.ts';
import { SpoolDrainer, type SpooledPoll } from './spool-drainer.ts';
import { claimFreeSlot, claimSlot, slotNumbers } from './spool-slot.ts';
import { Spool } from './spool.ts';
import { pollKey } from './topics.ts';

export interface KafkaBusOptions {
  kafka: Kafka;
  /** DATA_DIR: the spool is `<dataDir>/spool/carrier-polls/<slot>/`. */
  dataDir: string;
  /** Kafka stopped taking polls (said once per outage; they wait in the spool meanwhile). */
  onError?: (err: unknown) => void;
  /** Kafka takes polls again after an outage of `downForMs`. */
  onRecovered?: (downForMs: number) => void;
  /** Messages per transaction (default 500). */
  batchSize?: number;
  /** Wait between attempts while the broker is away (default 1 s). */
  retryDelayMs?: number;
  /** The raw-poll topic (default tracking.carrier-polls.v1); another one must already exist. */
  topic?: string;
}

/** How long close() waits for the spool to reach Kafka while Kafka is up; the rest goes at the next start. */
const CLOSE_FLUSH_MS = 5 * SECOND_MS;

/**
 * The raw-poll log on Kafka, exactly once. `publish` appends the poll to this process's spool slot
 * (on disk before it returns; never blocks on Kafka) and one drainer sends the slot to Kafka in
 * transactions that also commit its position (lib/kafka/spool-drainer.ts). One bus per process and
 * one owner per slot: processes sharing DATA_DIR get slots of their own, and a slot whose owner
 * died is drained by the next bus that starts there.
 */
export class KafkaBus implements PollBus {
  private readonly spool: Spool;
  private readonly main: SpoolDrainer;
  /** Slots of processes that died, drained then removed. */
  private readonly adopted: SpoolDrainer[];
  private closed = false;

  private constructor(spool: Spool, main: SpoolDrainer, adopted: SpoolDrainer[]) {
    this.spool = spool;
    this.main = main;
    this.adopted = adopted;
  }

  static async open(options: KafkaBusOptions): Promise<KafkaBus> {
    const base = join(options.dataDir, 'spool', 'carrier-polls');
    const slot = await claimFreeSlot(base);
    const spool = new Spool(slot.dir);
    importLegacySpool(options.dataDir, spool);
    const adopted: SpoolDrainer[] = [];
    for (const n of slotNumbers(base)) {
      const other = join(base, String(n));
      if (other === slot.dir) continue;
      const orphan = await claimSlot(other);
      if (orphan) adopted.push(new SpoolDrainer({ ...options, slot: orphan, spool: new Spool(orphan.dir), adopted: true }));
    }
    return new KafkaBus(spool, new SpoolDrainer({ ...options, slot, spool }), adopted);
  }

  publish(poll: CarrierPoll, mode: KeyMode): void {
    if (this.closed) throw new Error('the raw-poll bus is closed');
    const line: SpooledPoll = { t: Date.now(), key: pollKey(poll.carrier, poll.awb), value: JSON.stringify(poll), mode };
    this.spool.append(JSON.stringify(line));
    this.main.wake();
  }

  /** Resolves when every poll published so far is on Kafka (and the slots adopted at start are drained). */
  async flush(): Promise<void> {
    await Promise.all([this.main.until(this.spool.end()), ...this.adopted.map((d) => d.until({ segment: Number.MAX_SAFE_INTEGER, byte: 0 }))]);
  }

  /** True while Kafka is away and polls wait in the spool. */
  get spooled(): boolean {
    return this.main.failingSince !== null && this.main.pendingBytes() > 0;
  }

  health(): BusHealth {
    const drainers = [this.main, ...this.adopted.filter((d) => !d.finished)];
    const failing = drainers.map((d) => d.failingSince).filter((t): t is number => t !== null);
    const pendingSince = drainers.map((d) => d.pendingSince).filter((t): t is number => t !== null);
    return {
      target: 'kafka',
      ok: failing.length === 0,
      error: failing.length ? `Kafka unreachable since ${new Date(Math.min(...failing)).toISOString()}: ${this.main.lastError ?? 'see log'}` : null,
      spool_bytes: drainers.reduce((n, d) => n + d.pendingBytes(), 0),
      oldest_unsent_age_s: pendingSince.length ? Math.max(0, (Date.now() - Math.min(...pendingSince)) / 1000) : 0,
    };
  }

  /** Sends what it can for a few seconds while Kafka is up; what is left stays spooled for the next start. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.main.failingSince === null) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.flush(), new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_FLUSH_MS); })]);
      clearTimeout(timer);
    }
    await Promise.all([this.main.close(), ...this.adopted.map((d) => d.close())]);
    this.spool.close();
  }
}

/**
 * Before 2026-11-28 the spool was one file, `<dataDir>/spool/carrier-polls.ndjson`, in the same line
 * format: its polls are appended to the slot once. The rename first makes the file this process's
 * alone, so two processes starting together never both import it.
 */
function importLegacySpool(dataDir: string, spool: Spool): void {
  const legacy = join(dataDir, 'spool', 'carrier-polls.ndjson');
  if (!existsSync(legacy)) return;
  const mine = `${legacy}.importing-${process.pid}`;
  try {
    renameSync(legacy, mine);
  } catch {
    return; // another process took it
  }
  for (const line of readFileSync(mine, 'utf8').split('\n')) if (line.trim()) spool.append(line);
  rmSync(mine);
}
