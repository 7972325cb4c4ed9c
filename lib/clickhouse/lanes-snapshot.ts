/**
 * The lanes API's source over lane_stats: every lane of the window held in memory, kept current by
 * reading only the rows refreshes wrote since the last read. lane_stats holds one row per lane
 * (about 250 bytes in memory: 17,600 lanes ≈ 4 MiB; 200,000 ≈ 50 MiB), and it changes once a
 * minute when the normalizer refreshes the lanes that changed, so a lane read is a map lookup
 * instead of a ClickHouse query per request (several ms each on a busy machine: the bench's
 * "uncached" row).
 */
import { laneKeysBetween, readLaneStatsSince } from './lanes-window.ts';
import { DEFAULT_WINDOW_DAYS, type WindowedLaneStats } from '../lanes/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import type { ClickHouseClient } from './client.ts';

export interface ClickHouseLaneWindowSourceOptions {
  /** The carrier slugs whose lanes are read. */
  carriers: readonly string[];
  windowDays?: number;
  /**
   * How old the snapshot may get before a request starts a catch-up read. Default 60,000 ms
   * (lane_stats changes once a minute). Requests keep being answered from the snapshot while the
   * read runs, except with 0 (every request waits for a fresh read: tests) or when the snapshot is
   * older than `maxStaleMs`.
   */
  ttlMs?: number;
  /** Past this age requests wait for the catch-up read (and fail if ClickHouse does). Default 10 × ttlMs. */
  maxStaleMs?: number;
  /**
   * Rows this much older than the newest version seen are read again at each catch-up: two
   * normalizers' refreshes can overlap, and one that started first (older version) may finish last.
   * Default 600,000 ms (a refresh takes seconds).
   */
  overlapMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

interface Held {
  /** null: the lane's window emptied (kept so that an older row read again cannot bring it back). */
  stats: WindowedLaneStats | null;
  version: number;
}

export class ClickHouseLaneWindowSource {
  readonly windowDays: number;
  private readonly lanes = new Map<string, Held>();
  private newestVersion = 0;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | null = null;
  private readonly ttlMs: number;
  private readonly maxStaleMs: number;
  private readonly overlapMs: number;
  private readonly now: () => number;
  /** Catch-up reads sent (tests, bench). */
  reads = 0;

  private readonly client: ClickHouseClient;
  private readonly options: ClickHouseLaneWindowSourceOptions;
  constructor(client: ClickHouseClient, options: ClickHouseLaneWindowSourceOptions) {
    this.client = client;
    this.options = options;
    this.windowDays = options.windowDays ?? DEFAULT_WINDOW_DAYS;
    this.ttlMs = options.ttlMs ?? 60_000;
    this.maxStaleMs = options.maxStaleMs ?? 10 * this.ttlMs;
    this.overlapMs = options.overlapMs ?? 600_000;
    this.now = options.now ?? Date.now;
  }


  async lanesBetween(originPrefix: string, destinationPrefix: string, mode: KeyMode): Promise<WindowedLaneStats[]> {
    const age = this.now() - this.loadedAt;
    if (this.ttlMs === 0 || age > this.maxStaleMs) await this.catchUp();
    else if (age >= this.ttlMs) this.catchUp().catch(() => undefined); // served from the snapshot meanwhile; the next request tries again
    const found: WindowedLaneStats[] = [];
    for (const lane of laneKeysBetween(this.options.carriers, originPrefix, destinationPrefix, mode)) {
      const held = this.lanes.get(lane);
      if (held?.stats) found.push(held.stats);
    }
    return found;
  }

  freshness(): { readAtMs: number | null; nextReadAtMs: number } {
    const readAtMs = Number.isFinite(this.loadedAt) ? this.loadedAt : null;
    return { readAtMs, nextReadAtMs: readAtMs === null ? this.now() : readAtMs + this.ttlMs };
  }

  /** Reads the rows written since the newest version held (less the overlap); one read at a time. */
  catchUp(): Promise<void> {
    this.reading ??= this.read().finally(() => { this.reading = null; });
    return this.reading;
  }

  private async read(): Promise<void> {
    const startedAt = this.now();
    this.reads++;
    const since = this.newestVersion === 0 ? 0 : Math.max(0, this.newestVersion - this.overlapMs);
    const rows = await readLaneStatsSince(this.client, this.windowDays, since, { signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000) });
    for (const { stats, version } of rows) {
      const held = this.lanes.get(stats.lane);
      if (held && held.version >= version) continue;
      // A lane whose window emptied gets a row with closed = 0 (refreshLaneStats): it leaves the answer.
      this.lanes.set(stats.lane, { stats: stats.closed > 0 ? stats : null, version });
      if (version > this.newestVersion) this.newestVersion = version;
    }
    this.loadedAt = startedAt;
  }
}
