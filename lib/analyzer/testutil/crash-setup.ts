/** Shared by the analyzer's crash tests and the process they kill (crash-child.ts). */
import type { KeyRecord } from '../../access/index.ts';
import type { Plans } from '../../config/index.ts';
import { requireAwb } from '../../schemas/index.ts';
import type { ShipmentInput } from '../types.ts';

export interface CrashChildOptions {
  store: { kind: 'embedded'; dir: string } | { kind: 'redis'; url: string; namespace: string };
  phase: 'accepted' | 'mid-run';
  prefix: string;
}

export const CRASH_PLANS: Plans = {
  trial: { price_inr: 0, validity_days: 14, lookups: 100, burst_per_second: 5, daily_quota: 100, notices: 0 },
  starter: { price_inr: 399, validity_days: 30, lookups: 1500, burst_per_second: 5, daily_quota: 300, notices: 0 },
  growth: { price_inr: 999, validity_days: 30, lookups: 4000, burst_per_second: 10, daily_quota: 800, notices: 0 },
  business: { price_inr: 3000, validity_days: 30, lookups: 12000, burst_per_second: 20, daily_quota: 2400, notices: 0 },
};

export const crashRecord = (prefix: string): KeyRecord => ({
  prefix, hash: '0'.repeat(64), mode: 'test', email: 'crash@example.com', plan: 'business', status: 'active',
  period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z', lookups_limit: 12000, daily_quota: 2400,
  burst_per_second: 20, created_at: '2026-11-01T00:00:00.000Z', renewed_at: null, notices_sent: {},
});

/** 450 shipments: three chunks of the runner's 200. */
export const crashShipments = (): ShipmentInput[] => Array.from({ length: 450 }, (_, i) => ({
  awb: requireAwb(`C${String(i).padStart(5, '0')}`), carrier: 'delhivery', candidates: [],
  order_id: null, payment_mode: null, order_value_inr: null, promised_by_ms: null,
}));
