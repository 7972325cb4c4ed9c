/** config/sandbox/network.yaml: every parameter of the simulated network, validated with zod. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { STATE_CODES } from '../calendar/states.ts';
import { ConfigError, validateConfig } from '../config/load.ts';
import { DEFAULT_CONFIG_DIR } from '../config/schemas.ts';
import { ZONES, type Zone } from '../places/index.ts';
import { isIstDay } from '../time/ist-day.ts';

const Range = z.tuple([z.number().nonnegative(), z.number().nonnegative()]).refine(([a, b]) => a <= b, 'a [low, high] range with low ≤ high');
const Share = z.number().min(0).max(1);
const Hour = z.number().int().min(0).max(23);
const Day = z.preprocess(
  (value) => (value instanceof Date ? value.toISOString().slice(0, 10) : value),
  z.string().refine(isIstDay, 'a day written YYYY-MM-DD'),
);
const StateCode = z.string().refine((code) => STATE_CODES.includes(code), 'a two-letter state code (e.g. MH, TN)');
const Reasons = z.partialRecord(z.enum(['customer_unavailable', 'address_issue', 'refused', 'premises_closed', 'cod_not_ready']), z.number().positive());
const Pincode = z.coerce.string().regex(/^[1-9]\d{5}$/, 'a 6-digit pincode');
/** Working days by the lane's zone (lib/places zoneOf). */
const ZoneDays = z.object(Object.fromEntries(ZONES.map((zone) => [zone, z.number().int().min(0).max(30)])) as Record<Zone, z.ZodNumber>);

const ProfileSchema = z.object({
  pickup_cutoff_hour: Hour,
  first_mile_hours: Range,
  hub_dwell_hours: Range,
  linehaul: z.object({ base_hours: z.number().nonnegative(), per_1000_km_hours: z.number().nonnegative(), sigma: z.number().min(0).max(2) }),
  promise: z.object({ working_days: ZoneDays, express_working_days: ZoneDays.optional(), claimed_on_time: Share }),
});

export const NetworkConfigSchema = z.object({
  profiles: z.record(z.string(), ProfileSchema),
  carriers: z.record(z.string(), z.object({
    profile: z.string(),
    share: z.number().positive(),
    express_share: Share,
    states: z.array(StateCode).min(1).optional(),
  })),
  express_factor: z.number().positive().max(1),
  road_factor: z.number().min(1).max(3),
  remote: z.object({ extra_days: Range, special_extra_days: Range, attempt_failure_factor: z.number().min(1) }),
  hold: z.object({ probability: Share, scale_hours: z.number().positive(), alpha: z.number().positive(), max_hours: z.number().positive() }),
  festive: z.object({
    factor: z.number().min(1),
    attempt_failure_factor: z.number().min(1),
    windows: z.array(z.object({ from: Day, to: Day })),
  }),
  last_mile: z.object({ ofd_hour: Range, attempt_after_ofd_hours: Range, same_day_cutoff_hour: Hour }),
  attempts: z.object({
    cod_share: Share,
    failure_prepaid: Share,
    failure_cod: Share,
    max: z.tuple([z.number().int().min(1).max(6), z.number().int().min(1).max(6)]).refine(([a, b]) => a <= b, 'a [low, high] range with low ≤ high'),
    reasons_prepaid: Reasons,
    reasons_cod: Reasons,
  }),
  returns: z.object({
    cod: Share,
    prepaid: Share,
    refused_share: Share,
    city_spread: z.number().min(0).max(0.9),
    remote_factor: z.number().positive(),
    by_days_to_first_attempt: z.array(z.object({ up_to: z.number().int().min(0), factor: z.number().positive() })).min(1)
      .refine((rows) => rows.every((row, i) => i === 0 || row.up_to > rows[i - 1]!.up_to), 'rows in increasing `up_to` (the first that fits applies)'),
    reasons_unreachable: Reasons,
  }),
  loss_probability: Share,
  via_hub_min_km: z.number().nonnegative(),
  via_hubs: z.array(z.object({ name: z.string().min(1), lat: z.number(), lng: z.number() })).min(1),
  history: z.object({
    sandbox_lane_share: Share,
    fulfilment_centres: z.object({ share: Share, pincodes: z.array(Pincode).min(1) }),
    sellers: z.object({
      count: z.number().int().min(1).max(100_000),
      zipf: z.number().min(0).max(3),
      weights: z.object({ metro: z.number().nonnegative(), commerce: z.number().nonnegative(), other: z.number().nonnegative() }),
      commerce_districts: z.array(z.object({ state: StateCode, district: z.string().min(1) })),
    }),
    local_share: Share,
    metro_destination_share: Share,
    polls_per_journey: z.tuple([z.number().int().min(1), z.number().int().min(1)]),
  }),
}).superRefine((config, ctx) => {
  for (const [slug, carrier] of Object.entries(config.carriers)) {
    if (!config.profiles[carrier.profile]) {
      ctx.addIssue({ code: 'custom', path: ['carriers', slug, 'profile'], message: `no profile "${carrier.profile}" under profiles` });
    }
  }
});

export type NetworkConfig = z.infer<typeof NetworkConfigSchema>;
export type CarrierProfile = z.infer<typeof ProfileSchema>;

const loaded = new Map<string, NetworkConfig>();

/** config/sandbox/network.yaml of `configDir` (memoised); a bad field stops the start with its path named. */
export function loadNetworkConfig(configDir: string = DEFAULT_CONFIG_DIR): NetworkConfig {
  const cached = loaded.get(configDir);
  if (cached) return cached;
  const path = join(configDir, 'sandbox', 'network.yaml');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read configuration file ${path}: ${(err as Error).message}`);
  }
  const config = validateConfig(NetworkConfigSchema, parseYaml(text), path);
  loaded.set(configDir, config);
  return config;
}
