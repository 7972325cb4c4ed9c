/**
 * The Lua scripts of the Redis access store. Each runs atomically inside Redis, which is what makes
 * check-then-count exact across any number of API processes. Loaded with ioredis `defineCommand`,
 * which sends EVALSHA and falls back to EVAL when the server does not know the script yet.
 */

/**
 * The hot path, one round trip: re-check the stored key, then check burst → daily → period and, only
 * when all three pass, count in all three. A refusal counts nothing.
 *
 * KEYS: 1 key record hash, 2 period counter, 3 daily counter, 4 burst counter.
 * ARGV: 1 period_start the caller built KEYS from, 2 now (UTC ISO), 3 burst TTL ms, 4 daily TTL ms.
 * Returns {'missing'} | {'inactive'} | {'expired'} | {'stale', stored period_start}
 *       | {verdict, burst limit, daily limit, period limit, burst used, daily used, period used}.
 */
export const CONSUME_LUA = `
local rec = redis.call('HMGET', KEYS[1], 'status', 'period_start', 'period_end', 'burst_per_second', 'daily_quota', 'lookups_limit')
if not rec[1] then return {'missing'} end
-- The counter keys name the period; a renewal since the caller read the key makes them wrong.
if rec[2] ~= ARGV[1] then return {'stale', rec[2]} end
if rec[1] ~= 'active' then return {'inactive'} end
-- Both are UTC ISO 8601 strings of the same fixed width, so string order is time order.
if ARGV[2] >= rec[3] then return {'expired'} end
local limit = {tonumber(rec[4]), tonumber(rec[5]), tonumber(rec[6])}
local used = {
  tonumber(redis.call('GET', KEYS[4]) or '0'),
  tonumber(redis.call('GET', KEYS[3]) or '0'),
  tonumber(redis.call('GET', KEYS[2]) or '0'),
}
local verdict = 'ok'
if used[1] >= limit[1] then verdict = 'rate_limit_exceeded'
elseif used[2] >= limit[2] then verdict = 'daily_quota_exceeded'
elseif used[3] >= limit[3] then verdict = 'plan_quota_exceeded'
else
  used[1] = redis.call('INCR', KEYS[4])
  redis.call('PEXPIRE', KEYS[4], ARGV[3])
  used[2] = redis.call('INCR', KEYS[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
  -- The period counter lives as long as the key's period; a renewal deletes it.
  used[3] = redis.call('INCR', KEYS[2])
end
return {verdict, limit[1], limit[2], limit[3], used[1], used[2], used[3]}
`;

/**
 * Gives back one lookup to each counter named in KEYS (period, daily). Never below zero, and never
 * re-creates a counter that expired or was deleted by a renewal (DECR on a missing key would).
 */
export const REFUND_LUA = `
for i = 1, #KEYS do
  local v = tonumber(redis.call('GET', KEYS[i]) or '0')
  if v > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`;

/**
 * Creates a key record and its indexes, unless the prefix is taken (the caller draws a new key) or,
 * for a self-serve trial, the e-mail already had one.
 *
 * KEYS: 1 record hash, 2 prefix → hash index, 3 set of all hashes, 4 e-mail → trial prefix index.
 * ARGV: 1 '1' to refuse when a trial exists, 2 '1' when this key is a trial, 3 prefix, 4 hash,
 *       5 JSON object of the record's fields.
 */
export const CREATE_LUA = `
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 then return 'prefix_taken' end
if ARGV[1] == '1' and redis.call('EXISTS', KEYS[4]) == 1 then return 'trial_exists' end
local fields = {}
for k, v in pairs(cjson.decode(ARGV[5])) do fields[#fields + 1] = k; fields[#fields + 1] = v end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('SET', KEYS[2], ARGV[4])
redis.call('SADD', KEYS[3], ARGV[4])
if ARGV[2] == '1' then redis.call('SET', KEYS[4], ARGV[3], 'NX') end
return 'ok'
`;

/**
 * Compare-and-set of a whole key record: replaces the hash only if it still holds exactly the
 * fields the caller read, so admin changes decided in TypeScript (suspend, renew, notices) never
 * overwrite a concurrent change. Extra KEYS are deleted in the same step (a renewal's old counter).
 *
 * KEYS: 1 record hash, 2.. keys to delete. ARGV: 1 JSON of the expected fields, 2 JSON of the new.
 * Returns 1 when replaced, 0 when the record changed meanwhile, -1 when it does not exist.
 */
export const REPLACE_LUA = `
local current = redis.call('HGETALL', KEYS[1])
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
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
`;
