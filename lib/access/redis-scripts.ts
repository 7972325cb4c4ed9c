/**
 * The Lua scripts of the Redis access store. Each runs atomically inside Redis, which is what makes
 * check-then-count exact across any number of API processes. Loaded with ioredis `defineCommand`,
 * which sends EVALSHA and falls back to EVAL when the server does not know the script yet.
 */

/**
 * Lua declaring `burst`, `daily` and `period`: the counts of the usage hash `usageKey` (a Lua
 * expression) in the current second, UTC day and period; a count stored for another window reads as
 * zero. Expects locals `rec` (the key record), `day` and `second`. Shared by CONSUME_LUA and
 * CONSUME_BATCH_LUA so both read the windows alike.
 */
export function usedInWindowsLua(usageKey: string): string {
  return `local u = redis.call('HMGET', ${usageKey}, 'period_start', 'period_used', 'day', 'day_used', 'burst_second', 'burst_used')
local burst, daily, period = 0, 0, 0
if u[1] == rec.period_start then
  period = tonumber(u[2])
  if u[3] == day then daily = tonumber(u[4]) end
end
if u[5] == second then burst = tonumber(u[6]) end`;
}

/**
 * The hot path: one call for every lookup of an event-loop turn, in groups (one group per key and
 * second). For each group: read the presented key's record and, when asked to count n lookups,
 * check the stored key, then burst → daily → period, and count as many of the n as the three limits
 * allow. The record comes back with the verdict, so a lookup needs no other read.
 *
 * Counting n at once gives each of the n lookups exactly the answer it would get one after another:
 * a refusal counts nothing, so once one is refused every later one is refused by the same limit.
 * The first `granted` pass, and the i-th of them (from 0) sees the counts before plus i + 1; the
 * rest are refused with `refusal`, the first limit (in check order) that the counts after reach.
 *
 * The key's counters are one hash beside its record (usage:{<sha256>}): the window each count belongs
 * to is stored with it (period start, UTC day, Unix second), and a count of another window reads as
 * zero. So a renewal, a new day and a new second start from zero without expiries, and both keys
 * of a group follow from the presented key alone. Both carry the hash as their hash tag, so they
 * share a slot: on a Redis Cluster the caller sends one call per key hash (all its groups), on one
 * Redis one call for the whole turn.
 *
 * Decoding the record's fields was most of the client's work per lookup, so the record comes back
 * only when it differs from the one the caller already holds: the caller names the SHA-1 of the
 * fields it decoded last, and gets the fields only if the stored ones hash differently.
 *
 * Group g (from 1): KEYS[2g-1] key record hash, KEYS[2g] usage hash, or KEYS[1] and KEYS[2] for every
 * group when there are only two (the groups of one key, as sent on a cluster, where a fixed key
 * count lets the client route the call by its first key); ARGV[6(g-1) + 1..6]: earliest
 * and latest "now" of its n lookups (UTC ISO), their UTC day, their Unix second, n ('0' only to read
 * the record), digest of the record the caller holds ('' for none).
 * Returns one reply per group: {'missing'} | {verdict, digest, fields or {} when the digest is the
 * caller's, burst used, daily used, period used (before counting), granted, refusal or ''}; verdict
 * 'read' (not counted), 'inactive', 'expired' (for all n; also before a period that starts later),
 * 'split' (the period starts or ends between the earliest and the latest "now": nothing counted,
 * ask again one lookup at a time) or 'counted'.
 * fields is the record hash as HGETALL returns it (field, value, ...).
 */
export const CONSUME_LUA = `
local function consume(recordKey, usageKey, earliest, latest, day, second, n, knownDigest)
  local fields = redis.call('HGETALL', recordKey)
  if #fields == 0 then return {'missing'} end
  local digest = redis.sha1hex(table.concat(fields, '\\n'))
  local known = {}
  if digest ~= knownDigest then known = fields end
  if n == 0 then return {'read', digest, known, 0, 0, 0, 0, ''} end
  local rec = {}
  for i = 1, #fields, 2 do rec[fields[i]] = fields[i + 1] end
  if rec.status ~= 'active' then return {'inactive', digest, known, 0, 0, 0, 0, ''} end
  -- Both are UTC ISO 8601 strings of the same fixed width, so string order is time order.
  if earliest >= rec.period_end then return {'expired', digest, known, 0, 0, 0, 0, ''} end
  if latest >= rec.period_end then return {'split', digest, known, 0, 0, 0, 0, ''} end
  -- A period set to start later counts nothing before it starts (refused like an ended one).
  if latest < rec.period_start then return {'expired', digest, known, 0, 0, 0, 0, ''} end
  if earliest < rec.period_start then return {'split', digest, known, 0, 0, 0, 0, ''} end
  ${usedInWindowsLua('usageKey')}
  local burstLimit, dailyLimit, periodLimit = tonumber(rec.burst_per_second), tonumber(rec.daily_quota), tonumber(rec.lookups_limit)
  local granted = math.max(0, math.min(n, burstLimit - burst, dailyLimit - daily, periodLimit - period))
  local refusal = ''
  if granted < n then
    if burst + granted >= burstLimit then refusal = 'rate_limit_exceeded'
    elseif daily + granted >= dailyLimit then refusal = 'daily_quota_exceeded'
    else refusal = 'plan_quota_exceeded' end
  end
  if granted > 0 then
    redis.call('HSET', usageKey, 'period_start', rec.period_start, 'period_used', period + granted,
      'day', day, 'day_used', daily + granted, 'burst_second', second, 'burst_used', burst + granted)
  end
  return {'counted', digest, known, burst, daily, period, granted, refusal}
end

local replies = {}
local one = #KEYS == 2
for g = 1, #ARGV / 6 do
  local a = 6 * (g - 1)
  local recordKey, usageKey = KEYS[1], KEYS[2]
  if not one then recordKey, usageKey = KEYS[2 * g - 1], KEYS[2 * g] end
  replies[g] = consume(recordKey, usageKey, ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], tonumber(ARGV[a + 5]), ARGV[a + 6])
end
return replies
`;

/**
 * Gives back one lookup to the period and day named in ARGV, if the usage hash (KEYS[1]) still
 * counts in them (a renewal or a new day since leaves the newer counts alone). Never below zero.
 * ARGV: 1 period_start, 2 UTC day.
 */
export const REFUND_LUA = `
local u = redis.call('HMGET', KEYS[1], 'period_start', 'period_used', 'day', 'day_used')
if u[1] ~= ARGV[1] then return 0 end
if tonumber(u[2]) > 0 then redis.call('HINCRBY', KEYS[1], 'period_used', -1) end
if u[3] == ARGV[2] and tonumber(u[4]) > 0 then redis.call('HINCRBY', KEYS[1], 'day_used', -1) end
return 0
`;

/**
 * Writes a new key record (KEYS[1]) from the JSON object of its fields (ARGV[1]), unless a record
 * exists under that hash. Returns 1 when written, 0 when one existed. One step of a key's creation
 * (`RedisAccessStore.create` says why the steps are single-key).
 */
export const CREATE_RECORD_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fields = {}
for k, v in pairs(cjson.decode(ARGV[1])) do fields[#fields + 1] = k; fields[#fields + 1] = v end
redis.call('HSET', KEYS[1], unpack(fields))
return 1
`;

/** Deletes KEYS[1] if it still holds ARGV[1] (undoing a prefix reservation of this process only). */
export const DELETE_IF_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * The compare-and-set step both REPLACE_LUA and RENEW_FOR_PAYMENT_LUA begin with: KEYS[1]'s hash
 * is replaced by ARGV[2]'s fields only if it holds exactly ARGV[1]'s (returns -1 / 0 otherwise).
 */
const REPLACE_RECORD_IF_UNCHANGED = `local current = redis.call('HGETALL', KEYS[1])
if #current == 0 then return -1 end
local expected = cjson.decode(ARGV[1])
local remaining = 0
for _ in pairs(expected) do remaining = remaining + 1 end
for i = 1, #current, 2 do
  if expected[current[i]] ~= current[i + 1] then return 0 end
  remaining = remaining - 1
end
if remaining ~= 0 then return 0 end
local fields = {}
for k, v in pairs(cjson.decode(ARGV[2])) do fields[#fields + 1] = k; fields[#fields + 1] = v end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(fields))
`;

/**
 * Compare-and-set of a whole key record: replaces the hash only if it still holds exactly the
 * fields the caller read, so admin changes decided in TypeScript (suspend, renew, notices) never
 * overwrite a concurrent change. Extra KEYS are deleted in the same step (a renewal's old counts:
 * the usage hash, in the record's slot).
 *
 * KEYS: 1 record hash, 2.. keys to delete. ARGV: 1 JSON of the expected fields, 2 JSON of the new.
 * Returns 1 when replaced, 0 when the record changed meanwhile, -1 when it does not exist.
 */
export const REPLACE_LUA = `
${REPLACE_RECORD_IF_UNCHANGED}for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
`;

/**
 * A paid renewal and the record of its payment id in one step (renewForPayment): KEYS 1 the record
 * hash, 2 the usage hash (a new period's counts start at zero), 3 the set of payment ids applied
 * to the key, all in the key's slot. ARGV: 1 JSON of the expected fields, 2 JSON of the new, 3 the
 * payment id. Returns 2 when that payment was applied already (nothing written), else as REPLACE_LUA.
 */
export const RENEW_FOR_PAYMENT_LUA = `
if redis.call('SISMEMBER', KEYS[3], ARGV[3]) == 1 then return 2 end
${REPLACE_RECORD_IF_UNCHANGED}redis.call('DEL', KEYS[2])
redis.call('SADD', KEYS[3], ARGV[3])
return 1
`;
