import cron from 'node-cron';
import { z } from 'zod';
import { fileURLToPath } from 'node:url';
import { parseRedisUrl } from '../redis/connect.ts';
import { CanonicalAwbSchema, EVENT_CODES, NDR_REASONS, STATUSES } from '../schemas/index.ts';

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
  /** Customer notices per period (WhatsApp, SMS, e-mail to the shop's customers); 0: not in the plan. */
  notices: z.number().int().nonnegative().default(0),
});
export type Plan = z.infer<typeof PlanSchema>;

export const PlansFileSchema = z.object({
  plans: z.object({ trial: PlanSchema, starter: PlanSchema, growth: PlanSchema, business: PlanSchema }).strict(),
});
export type Plans = z.infer<typeof PlansFileSchema>['plans'];

/** The customer notices' registered templates (config/notices.yaml); one key per notice kind. */
const NOTICE_KIND_NAMES = ['picked_up', 'out_for_delivery', 'delivered', 'failed_attempt', 'running_late', 'returned'] as const;
type NoticeKindName = (typeof NOTICE_KIND_NAMES)[number];
const perKind = <T extends z.ZodType>(value: T) => z.object(Object.fromEntries(NOTICE_KIND_NAMES.map((k) => [k, value])) as Record<NoticeKindName, T>).strict();
const templateId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a template id of letters, digits, _ or -');
export const NoticeTemplatesFileSchema = z.object({
  whatsapp: perKind(z.string().regex(/^[a-z0-9_]{1,512}$/, 'a WhatsApp template name (lower case, digits, _)')),
  dlt: z.object({
    entity_id: z.string().regex(/^\d{10,25}$/, 'the DLT principal entity id (digits)'),
    sender: z.string().regex(/^[A-Z]{6}$/, 'the 6-letter DLT sender header, upper case'),
  }).strict(),
  sms: perKind(z.object({ en: templateId, hi: templateId, ta: templateId, bn: templateId }).strict()),
}).strict();
export type NoticeTemplates = z.infer<typeof NoticeTemplatesFileSchema>;

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
  // Auto-detection (lib/detect). Kept apart from awb_patterns so either can change alone.
  /** A consignment number to show users (GET /v1/carriers); the sandbox answers it. */
  example_awb: CanonicalAwbSchema.optional(),
  /** Real-shaped numbers of this carrier: the sample detection confidences are shares of. */
  sample_awbs: z.array(CanonicalAwbSchema).default([]),
  /** More shapes detection uses beside awb_patterns (seen in real bodies). */
  detect_patterns: z.array(regexString).default([]),
  /** False when awb_patterns accept anything (an aggregator) and so say nothing about a number. */
  detect_by_awb_patterns: z.boolean().default(true),
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
  /** Codes of return-leg scans; a trailing `*` makes a prefix ("RT-*"), never a lone `*`. */
  return_leg_codes: z.array(z.string().regex(/^[^*]+\*?$/, 'a code, or a code prefix ending in *')).default([]),
  rules: z.array(MappingRuleSchema).min(1),
}).strict();
export type CarrierMapping = z.infer<typeof CarrierMappingFileSchema>;

export const CommonMappingFileSchema = z.object({ before: z.array(MappingRuleSchema) }).strict();

export const NdrFileSchema = z.object({
  reasons: z.array(z.object({ reason: z.enum(NDR_REASONS), stems: patterns }).strict()).min(1),
}).strict();
export type NdrRules = z.infer<typeof NdrFileSchema>;

/** Environment of every app. Defaults give the embedded single-process mode. */
/** An empty variable (`X=` in a compose file) means unset, as for the variables read before this schema. */
function unsetWhenEmpty<S extends z.ZodType>(schema: S) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema);
}

export const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  ADMIN_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  DATA_DIR: z.string().default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** One Redis (redis://, rediss://) or a Redis Cluster by some of its nodes (redis+cluster://h:p,h:p). */
  REDIS_URL: z.string().superRefine((url, ctx) => {
    try {
      if (parseRedisUrl(url).kind === 'single') new URL(url);
    } catch (err) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: err instanceof TypeError ? 'Invalid url' : (err as Error).message });
    }
  }).optional(),
  KAFKA_BROKERS: z.string().regex(/^[^,\s]+(,[^,\s]+)*$/, 'comma-separated host:port list').optional(),
  CLICKHOUSE_URL: z.string().url().optional(),
  SMTP_URL: z.string().url().optional(),
  SANDBOX_URL: z.string().url().optional(),
  CONFIG_DIR: z.string().default(DEFAULT_CONFIG_DIR),
  /** Which proxies may set the client address via X-Forwarded-For: unset (none), "true" or addresses. */
  TRUST_PROXY: z.string().optional(),
  /** How long the API keeps a lane benchmark read from ClickHouse (default 60 s). */
  LANE_CACHE_TTL_MS: z.coerce.number().int().min(0).default(60_000),
  /**
   * What the embedded default's in-process tracking cache may hold, in bytes (default 128 MiB);
   * delivered records past it are read back from DATA_DIR/records (lib/cache/memory.ts).
   */
  CACHE_MAX_BYTES: unsetWhenEmpty(z.coerce.number().int().min(1_048_576, 'at least 1 MiB (1048576)').default(128 * 1_048_576)),
  /** How often the delivery model is rebuilt (contracts.md: at least every 10 minutes). */
  PREDICTION_REBUILD_SECONDS: unsetWhenEmpty(z.coerce.number().int().min(10).max(600).default(600)),
  /** Tracking page views per client address per minute (default 120; past it 429 with Retry-After). */
  TRACKING_PAGE_VIEWS_PER_MINUTE: unsetWhenEmpty(z.coerce.number().int().min(1).default(120)),
  /** How often active and watched shipments are re-polled (default 7200 s = 2 h). */
  POLLER_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(7200),
  /** Seconds to wait after each failed webhook attempt; one more failure than steps gives up. */
  /**
   * Seconds before each retry round of an analysis's carrier errors (lib/analyzer/runner.ts); the
   * first past a carrier breaker's 10 s rest. Default 5 rounds within 4 minutes.
   */
  ANALYZER_RETRY_SCHEDULE: z.string().regex(/^\s*\d+(\.\d+)?\s*(,\s*\d+(\.\d+)?\s*)*$/, 'comma-separated seconds, e.g. 15,30,60').default('15,30,60,60,60'),
  WEBHOOK_RETRY_SCHEDULE: z.string().regex(/^\s*\d+(\.\d+)?\s*(,\s*\d+(\.\d+)?\s*)*$/, 'comma-separated seconds, e.g. 5,300,1800')
    .default('5,300,1800,7200,18000,36000,36000'),
  /**
   * Non-public webhook targets the operator opens (comma-separated addresses or CIDR ranges, e.g.
   * `127.0.0.1/32,::1` for a receiver on this machine); default none: public addresses only.
   */
  WEBHOOK_ALLOWED_TARGETS: unsetWhenEmpty(z.string().optional()),
  /** ClickHouse database of the tables (default `tracking`, or a path in CLICKHOUSE_URL). */
  CLICKHOUSE_DATABASE: unsetWhenEmpty(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a database name: letters, digits and _').optional()),
  /**
   * The embedded default's first start (empty DATA_DIR) seeds a test-mode history of this many
   * network journeys over SANDBOX_HISTORY_DAYS (default 20,000 over 90 days; 0: none).
   */
  SANDBOX_HISTORY_SHIPMENTS: unsetWhenEmpty(z.coerce.number().int()
    .min(0, 'a whole number of journeys from 0 to 1000000').max(1_000_000, 'a whole number of journeys from 0 to 1000000').default(20_000)),
  SANDBOX_HISTORY_DAYS: unsetWhenEmpty(z.coerce.number().int()
    .min(1, 'a whole number of days from 1 to 365').max(365, 'a whole number of days from 1 to 365').default(90)),
  /** Days of closed shipments in lane statistics (API and normalizer). */
  LANE_WINDOW_DAYS: unsetWhenEmpty(z.coerce.number().int()
    .min(1, 'a whole number of days from 1 to 3650').max(3650, 'a whole number of days from 1 to 3650').default(90)),
  /** Plan notices: the payment page linked from them, their sender, their schedule. */
  PAYMENT_URL: unsetWhenEmpty(z.url({ protocol: /^https?$/ }).optional()),
  MAIL_FROM: unsetWhenEmpty(z.string().trim().min(3).optional()),
  /** The service's own address as customers reach it (links in e-mails, payment callbacks); default http://HOST:PORT. */
  PUBLIC_BASE_URL: unsetWhenEmpty(z.url({ protocol: /^https?$/ }).optional()),
  /** Razorpay (lib/billing): live keys pay there when all three are set; else the sandbox gateway or none. */
  RAZORPAY_KEY_ID: unsetWhenEmpty(z.string().trim().min(1).optional()),
  RAZORPAY_KEY_SECRET: unsetWhenEmpty(z.string().trim().min(1).optional()),
  RAZORPAY_WEBHOOK_SECRET: unsetWhenEmpty(z.string().trim().min(1).optional()),
  /** Razorpay's API base (default https://api.razorpay.com); tests point it at a sandbox gateway. */
  RAZORPAY_API_URL: unsetWhenEmpty(z.url({ protocol: /^https?$/ }).default('https://api.razorpay.com')),
  NOTICE_CRON: unsetWhenEmpty(z.string().trim().refine((s) => cron.validate(s), 'a cron expression (node-cron syntax)').optional()),
  /** The sandbox carrier network's faults at start: JSON object slug → faults (lib/sandbox checks its shape). */
  SANDBOX_FAULTS: unsetWhenEmpty(z.string().optional()),
  /**
   * Customer notices (lib/buyer-notices). The contact vault's key: 32 bytes, base64; unset: one made
   * once in DATA_DIR/contact-key (mode 0600). Processes sharing Redis must all have the same one.
   */
  CONTACT_ENCRYPTION_KEY: unsetWhenEmpty(z.string().trim().optional()),
  /** WhatsApp Cloud API: live keys' notices go there when the phone number id and token are set. */
  WHATSAPP_API_URL: unsetWhenEmpty(z.url({ protocol: /^https?$/ }).default('https://graph.facebook.com')),
  WHATSAPP_API_VERSION: unsetWhenEmpty(z.string().regex(/^v\d+\.\d+$/, 'a Graph API version such as v23.0').default('v23.0')),
  WHATSAPP_PHONE_NUMBER_ID: unsetWhenEmpty(z.string().regex(/^\d{5,20}$/, 'the business phone number id (digits)').optional()),
  WHATSAPP_ACCESS_TOKEN: unsetWhenEmpty(z.string().trim().min(1).optional()),
  /** The Meta app's secret: status and reply webhooks are checked against X-Hub-Signature-256 with it. */
  WHATSAPP_APP_SECRET: unsetWhenEmpty(z.string().trim().min(1).optional()),
  /** The token Meta's webhook verification handshake must present (hub.verify_token). */
  WHATSAPP_VERIFY_TOKEN: unsetWhenEmpty(z.string().trim().min(8, 'at least 8 characters').optional()),
  /** MSG91 Flow API (DLT SMS): live keys' SMS go there when the auth key is set. */
  MSG91_API_URL: unsetWhenEmpty(z.url({ protocol: /^https?$/ }).default('https://control.msg91.com')),
  MSG91_AUTHKEY: unsetWhenEmpty(z.string().trim().min(1).optional()),
  /** The secret in the SMS inbound URL (/notices/sms/inbound?token=…) MSG91 posts replies to (STOP). */
  SMS_INBOUND_TOKEN: unsetWhenEmpty(z.string().trim().min(16, 'at least 16 characters').optional()),
  /** The CLI's key for `lanes` (or --key). */
  TRACKING_API_KEY: unsetWhenEmpty(z.string().optional()),
});
export type Env = z.infer<typeof EnvSchema>;

/** `npm run sandbox`: the same variables; it listens on 4010 by default, beside an API on 3000. */
export const SandboxEnvSchema = EnvSchema.extend({ PORT: z.coerce.number().int().min(0).max(65535).default(4010) });

/**
 * `env` without any of the project's variables: what a process sees on a machine where none is
 * set (a fresh clone's `npm start`, a bench's server that is given its own).
 */
export function withoutProjectEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { ...env };
  for (const name of Object.keys(EnvSchema.shape)) delete clean[name];
  return clean;
}
