import { usedInWindowsLua } from './redis-scripts.ts';

/**
 * A batch's access step in one script (`AccessStore.authorizeBatch`), beside CONSUME_LUA and with
 * the same key layout and windows: read the record, refuse an inactive key and one outside its
 * period (ended, or set to start later: 'expired' as in CONSUME_LUA), then count
 * the batch as one request against the burst limit and as n lookups against the daily and period
 * quotas, as many as they leave (`batchGrant` in limits.ts is the same rule). Nothing is written
 * when the burst refuses the batch.
 *
 * KEYS: 1 key record hash, 2 usage hash. ARGV: 1 "now" (UTC ISO), 2 its UTC day, 3 its Unix second,
 * 4 n. Returns {'missing'} | {verdict, fields, burst, daily, period (before), granted, burstRefused}
 * with verdict 'inactive', 'expired' or 'counted' and fields as HGETALL returns them.
 */
export const CONSUME_BATCH_LUA = `
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return {'missing'} end
local rec = {}
for i = 1, #fields, 2 do rec[fields[i]] = fields[i + 1] end
if rec.status ~= 'active' then return {'inactive', fields, 0, 0, 0, 0, 0} end
if ARGV[1] >= rec.period_end then return {'expired', fields, 0, 0, 0, 0, 0} end
-- UTC ISO 8601 strings of one fixed width: string order is time order.
if ARGV[1] < rec.period_start then return {'expired', fields, 0, 0, 0, 0, 0} end
local day, second, n = ARGV[2], ARGV[3], tonumber(ARGV[4])
${usedInWindowsLua('KEYS[2]')}
if burst >= tonumber(rec.burst_per_second) then return {'counted', fields, burst, daily, period, 0, 1} end
local granted = math.max(0, math.min(n, tonumber(rec.daily_quota) - daily, tonumber(rec.lookups_limit) - period))
redis.call('HSET', KEYS[2], 'period_start', rec.period_start, 'period_used', period + granted,
  'day', day, 'day_used', daily + granted, 'burst_second', second, 'burst_used', burst + 1)
return {'counted', fields, burst, daily, period, granted, 0}
`;
