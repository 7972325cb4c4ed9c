import { KeyRecordSchema, type KeyRecord } from './record.ts';

/** Redis hashes hold strings only; absent optional fields are absent fields, never empty strings. */
export type HashFields = Record<string, string>;

const NUMBER_FIELDS = ['lookups_limit', 'daily_quota', 'burst_per_second'] as const;

export function encodeRecord(record: KeyRecord): HashFields {
  const fields: HashFields = {
    prefix: record.prefix,
    hash: record.hash,
    mode: record.mode,
    email: record.email,
    plan: record.plan,
    status: record.status,
    period_start: record.period_start,
    period_end: record.period_end,
    lookups_limit: String(record.lookups_limit),
    daily_quota: String(record.daily_quota),
    burst_per_second: String(record.burst_per_second),
    created_at: record.created_at,
  };
  if (record.renewed_at !== null) fields.renewed_at = record.renewed_at;
  if (record.notices_sent.three_day) fields.notice_three_day = record.notices_sent.three_day;
  if (record.notices_sent.last_day) fields.notice_last_day = record.notices_sent.last_day;
  return fields;
}

/** The record in a hash, or null for an empty reply (no such key). Throws on a corrupt record. */
export function decodeRecord(fields: HashFields): KeyRecord | null {
  if (Object.keys(fields).length === 0) return null;
  const { notice_three_day, notice_last_day, renewed_at, ...rest } = fields;
  const numbers = Object.fromEntries(NUMBER_FIELDS.map((f) => [f, Number(rest[f])]));
  const notices = {
    ...(notice_three_day ? { three_day: notice_three_day } : {}),
    ...(notice_last_day ? { last_day: notice_last_day } : {}),
  };
  return KeyRecordSchema.parse({ ...rest, ...numbers, renewed_at: renewed_at ?? null, notices_sent: notices });
}
