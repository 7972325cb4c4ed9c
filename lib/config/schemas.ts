import { z } from 'zod';
import { fileURLToPath } from 'node:url';
import { EVENT_CODES, NDR_REASONS, STATUSES } from '../schemas/index.ts';

/** The repository's `config/`, wherever the process was started from. */
export const DEFAULT_CONFIG_DIR = fileURLToPath(new URL('../../config/', import.meta.url));

export const PLAN_NAMES = ['trial', 'starter', 'growth', 'business'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const PlanSchema = z.object({
  price_inr: z.number().int().nonnegative(),
  validity_days: z.number().int().positive(),
  lookups: z.number().int().positive(),
  burst_per_second: z.number().int().positive(),
  daily_quota: z.number().int().positive(),
});
export type Plan = z.infer<typeof PlanSchema>;

export const PlansFileSchema = z.object({
  plans: z.object({ trial: PlanSchema, starter: PlanSchema, growth: PlanSchema, business: PlanSchema }).strict(),
});
export type Plans = z.infer<typeof PlansFileSchema>['plans'];

const regexString = z.string().refine((s) => {
  try { new RegExp(s); return true; } catch { return false; }
}, 'a valid regular expression');

export const CarrierSchema = z.object({
  slug: z.string().regex(/^[a-z0-9]+$/, 'lowercase letters and digits only'),
  name: z.string().min(1),
  kind: z.string().min(1),
  aliases: z.array(z.string().min(1)),
  awb_patterns: z.array(regexString).min(1),
  specificity: z.number().int().min(0),
});
export type CarrierConfig = z.infer<typeof CarrierSchema>;

export const CarriersFileSchema = z.object({ carriers: z.array(CarrierSchema).length(11) });

const patterns = z.array(z.string().min(1)).min(1);

export const MappingRuleSchema = z.object({
  when: z
    .object({ text: patterns.optional(), remarks: patterns.optional(), raw_code: patterns.optional() })
    .strict()
    .refine((w) => w.text || w.remarks || w.raw_code, 'at least one of text, remarks, raw_code'),
  status: z.enum(STATUSES),
  code: z.enum(EVENT_CODES).exclude(['unknown']),
  /** A fixed NDR reason; without it delivery attempts and holds take the reason from the remark. */
  reason: z.enum(NDR_REASONS).optional(),
}).strict();
export type MappingRule = z.infer<typeof MappingRuleSchema>;

export const CarrierMappingFileSchema = z.object({
  carrier: z.string().regex(/^[a-z0-9]+$/),
  return_leg_codes: z.array(z.string().min(1)).default([]),
  rules: z.array(MappingRuleSchema).min(1),
}).strict();
export type CarrierMapping = z.infer<typeof CarrierMappingFileSchema>;

export const CommonMappingFileSchema = z.object({ before: z.array(MappingRuleSchema) }).strict();

export const NdrFileSchema = z.object({
  reasons: z.array(z.object({ reason: z.enum(NDR_REASONS), stems: patterns }).strict()).min(1),
}).strict();
export type NdrRules = z.infer<typeof NdrFileSchema>;

/** Environment of every app. Defaults give the embedded single-process mode. */
export const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  ADMIN_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  DATA_DIR: z.string().default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  REDIS_URL: z.string().url().optional(),
  KAFKA_BROKERS: z.string().regex(/^[^,\s]+(,[^,\s]+)*$/, 'comma-separated host:port list').optional(),
  CLICKHOUSE_URL: z.string().url().optional(),
  SMTP_URL: z.string().url().optional(),
  SANDBOX_URL: z.string().url().optional(),
  CONFIG_DIR: z.string().default(DEFAULT_CONFIG_DIR),
  /** Which proxies may set the client address via X-Forwarded-For: unset (none), "true" or addresses. */
  TRUST_PROXY: z.string().optional(),
  /** How long the API keeps a lane benchmark read from ClickHouse (default 60 s). */
  LANE_CACHE_TTL_MS: z.coerce.number().int().min(0).default(60_000),
  /** How often active and watched shipments are re-polled (default 7200 s = 2 h). */
  POLLER_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(7200),
  /** Seconds to wait after each failed webhook attempt; one more failure than steps gives up. */
  WEBHOOK_RETRY_SCHEDULE: z.string().regex(/^\s*\d+(\.\d+)?\s*(,\s*\d+(\.\d+)?\s*)*$/, 'comma-separated seconds, e.g. 5,300,1800').default('5,300,1800,7200,18000,36000,36000'),
});
export type Env = z.infer<typeof EnvSchema>;
