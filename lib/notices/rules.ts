/**
 * When a plan-expiry notice is due (decisions.md "Keys, plans and metering"). Pure: `now` always
 * comes from the caller.
 *
 * - `three_day`: from 72 h before `period_end` until the last day begins.
 * - `last_day`: the 24 h before `period_end` ("the last day" is those 24 hours, not a UTC
 *   calendar day, so every key gets the same lead time wherever its period ends in the day).
 * - Each at most once per period (`notices_sent`, which a renewal clears), only for keys whose
 *   effective status is `active`: never for revoked or suspended keys, never once expired.
 * - A three-day notice whose window was missed (job down, or a period shorter than three days
 *   reaching its last day) is not sent late: the last-day notice covers it, and two e-mails at once
 *   about the same expiry would only confuse.
 */
import { effectiveStatus, type KeyRecord, type Notice } from '../access/index.ts';
import { HOUR_MS } from '../time/index.ts';


/** How long before `period_end` each notice's window opens. */
export const NOTICE_LEAD_MS: Readonly<Record<Notice, number>> = {
  three_day: 72 * HOUR_MS,
  last_day: 24 * HOUR_MS,
};

export interface DueNotice {
  record: KeyRecord;
  which: Notice;
}

/** The notice whose window `now` is in for this record, ignoring whether it was already sent. */
export function noticeWindow(record: KeyRecord, now: Date): Notice | null {
  const left = Date.parse(record.period_end) - now.getTime();
  if (left <= 0) return null;
  if (left <= NOTICE_LEAD_MS.last_day) return 'last_day';
  if (left <= NOTICE_LEAD_MS.three_day) return 'three_day';
  return null;
}

/** The notice this record is owed at `now`, or null. */
export function noticeDue(record: KeyRecord, now: Date): Notice | null {
  if (effectiveStatus(record, now) !== 'active') return null;
  const which = noticeWindow(record, now);
  if (which === null || record.notices_sent[which] !== undefined) return null;
  return which;
}

/** Every notice owed at `now`, in the order of `records` (the store lists oldest keys first). */
export function noticesDue(records: readonly KeyRecord[], now: Date): DueNotice[] {
  const due: DueNotice[] = [];
  for (const record of records) {
    const which = noticeDue(record, now);
    if (which !== null) due.push({ record, which });
  }
  return due;
}
