/**
 * One round of the notice job: find the notices due, claim each with `markNoticeSent` (so of
 * several concurrent jobs — API replicas, the poller — exactly one sends it), then send it.
 *
 * Delivery is at most once per notice and period: the claim is made before sending and the store
 * has no "unmark". To keep losses rare the mailer is verified before anything is claimed (SMTP
 * unreachable → nothing is claimed, every due notice waits for the next round), a transient send
 * failure is retried a few times within the round, and after a failed send the mailer is verified
 * again before the next claim. A notice that still fails is logged at error level with the key
 * prefix and the notice, and not sent again (the last-day notice, if still ahead, goes as usual).
 */
import type { AccessStore, Notice } from '../access/index.ts';
import { composeNotice, type NoticeContent } from './compose.ts';
import { isPermanentMailError, type Mailer } from './mailer.ts';
import { noticeDue, noticesDue } from './rules.ts';

export interface NoticeLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface NoticeJobCounts {
  /** Notices found due in the listing. */
  due: number;
  sent: number;
  /** Claimed by another job, or no longer due when re-read (renewed, suspended, revoked meanwhile). */
  skipped: number;
  /** Claimed but not delivered: logged, not retried in later rounds (at most once). */
  failed: number;
  /** Not attempted (mailer or store unavailable); still due, so the next round tries again. */
  deferred: number;
}

export interface NoticeJobOptions {
  access: AccessStore;
  mailer: Mailer;
  content: NoticeContent;
  now: Date;
  log: NoticeLog;
  /** Waits between attempts of a transiently failing send; default 2 s and 10 s. */
  retryDelaysMs?: readonly number[];
}

const DEFAULT_RETRY_DELAYS_MS = [2_000, 10_000];

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function mailerReady(mailer: Mailer, log: NoticeLog): Promise<boolean> {
  try {
    await mailer.verify();
    return true;
  } catch (err) {
    log.warn(`notices: mail ${mailer.kind} ${mailer.target} unavailable (${describe(err)}); due notices wait for the next round`);
    return false;
  }
}

/** Runs one round at `now`; throws only when the keys cannot be listed (nothing was done then). */
export async function runNoticeJob(options: NoticeJobOptions): Promise<NoticeJobCounts> {
  const { access, mailer, content, now, log } = options;
  const retryDelays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const due = noticesDue(await access.list(), now);
  const counts: NoticeJobCounts = { due: due.length, sent: 0, skipped: 0, failed: 0, deferred: 0 };
  if (due.length === 0) return counts;
  if (!(await mailerReady(mailer, log))) {
    counts.deferred = due.length;
    return counts;
  }

  for (let i = 0; i < due.length; i++) {
    const { record: listed, which } = due[i]!;
    const label = `${which} notice for ${listed.prefix}`;
    let claimed: Notice | null;
    let record = listed;
    try {
      // Re-read just before claiming: the listing may be stale (a renewal, suspension or
      // revocation since), and the claim applies to whatever period the key has now.
      const fresh = await access.getByPrefix(listed.prefix);
      claimed = fresh && fresh.period_end === listed.period_end && noticeDue(fresh, now) === which ? which : null;
      if (claimed && fresh && !(await access.markNoticeSent(fresh.prefix, which, now))) claimed = null;
      if (fresh) record = fresh;
    } catch (err) {
      log.error(`notices: ${label} not claimed, store error: ${describe(err)}; retried next round`);
      counts.deferred++;
      continue;
    }
    if (!claimed) {
      counts.skipped++;
      continue;
    }

    const message = composeNotice(record, which, content);
    let lastError: unknown;
    for (let attempt = 0; attempt <= retryDelays.length; attempt++) {
      if (attempt > 0) await sleep(retryDelays[attempt - 1]!);
      try {
        const { id, location } = await mailer.send(message);
        log.info(`notices: sent ${label} (${id}${location ? `, ${location}` : ''})`);
        counts.sent++;
        lastError = undefined;
        break;
      } catch (err) {
        lastError = err;
        if (isPermanentMailError(err)) break;
      }
    }
    if (lastError === undefined) continue;

    counts.failed++;
    log.error(`notices: ${label} (plan ${record.plan}, period ending ${record.period_end}) was marked sent but could not be delivered: ` +
      `${describe(lastError)}. It is not retried; contact the customer if needed.`);
    if (!isPermanentMailError(lastError) && !(await mailerReady(mailer, log))) {
      counts.deferred += due.length - i - 1;
      return counts;
    }
  }
  if (counts.failed > 0 || counts.sent > 0) {
    log.info(`notices: ${counts.sent} sent, ${counts.failed} failed, ${counts.skipped} skipped, ${counts.deferred} deferred of ${counts.due} due`);
  }
  return counts;
}
