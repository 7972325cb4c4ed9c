/** The notice job on a node-cron schedule, for the embedded default and the poller app. */
import cron from 'node-cron';
import type { AccessStore } from '../access/index.ts';
import type { NoticeContent } from './compose.ts';
import { runNoticeJob, type NoticeJobCounts, type NoticeLog } from './job.ts';
import type { Mailer } from './mailer.ts';
import { DEFAULT_NOTICE_CRON } from './settings.ts';

export interface ScheduleNoticesOptions {
  access: AccessStore;
  mailer: Mailer;
  content: NoticeContent;
  log: NoticeLog;
  /** Milliseconds since the epoch; default Date.now. */
  clock?: () => number;
  /** node-cron expression, evaluated in UTC; default hourly (`7 * * * *`). */
  cron?: string;
  /** Also run one round right away (catches up after downtime); default true. */
  runAtStart?: boolean;
  retryDelaysMs?: readonly number[];
  /** Called after every round, e.g. for metrics. */
  onRound?: (counts: NoticeJobCounts) => void;
}

/**
 * Starts the schedule; the returned function stops it and waits for a round in progress. Rounds
 * never overlap (a tick during a slow round is dropped). Closing the mailer and the store stays
 * with the caller, after stopping.
 */
export function scheduleNotices(options: ScheduleNoticesOptions): () => Promise<void> {
  const clock = options.clock ?? Date.now;
  let running: Promise<void> | null = null;
  let stopped = false;

  const round = () => {
    if (running || stopped) return;
    running = (async () => {
      try {
        const counts = await runNoticeJob({
          access: options.access, mailer: options.mailer, content: options.content, now: new Date(clock()), log: options.log,
          ...(options.retryDelaysMs ? { retryDelaysMs: options.retryDelaysMs } : {}),
        });
        options.onRound?.(counts);
      } catch (err) {
        options.log.error(`notices: round failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    })().finally(() => { running = null; });
  };

  const task = cron.schedule(options.cron ?? DEFAULT_NOTICE_CRON, round, { timezone: 'Etc/UTC', name: 'plan-expiry-notices' });
  if (options.runAtStart ?? true) round();

  return async () => {
    stopped = true;
    await task.destroy();
    await running;
  };
}
