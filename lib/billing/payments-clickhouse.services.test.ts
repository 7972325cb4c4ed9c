/** Settled payments in ClickHouse's `payments` table (migration 0016, real ClickHouse). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, rowsOf, type TestDatabase } from '../clickhouse/testutil/database.ts';
import { ClickHousePaymentReport } from './payments-clickhouse.ts';
import type { PaymentRecord } from './payments.ts';

const applied: PaymentRecord = {
  id: 'pay_Ch0000000001', key_prefix: 'trk_live_Ab3dE9x', plan: 'growth', amount_paise: 99_900, currency: 'INR',
  status: 'captured', paid_at: '2026-11-26T10:15:30.000Z', link_id: 'plink_Ch00000001', reference_id: 'rn_abcdefabcdefabcdef',
  gateway: 'razorpay', applied: true, reason: null, state: 'settled', lease_until: 0,
};

describe('payments table (real ClickHouse)', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db?.drop(); });

  it('keeps each settled payment, applied or not, once after a repeated write', async () => {
    const report = new ClickHousePaymentReport(db.client);
    const short: PaymentRecord = { ...applied, id: 'pay_Ch0000000002', amount_paise: 39_800, plan: 'starter', applied: false, reason: 'amount_mismatch', reference_id: null };
    await report.write(applied);
    await report.write(applied);
    await report.write(short);
    const rows = await rowsOf<Record<string, unknown>>(db.client, 'SELECT * FROM payments FINAL ORDER BY payment_id');
    expect(rows).toEqual([
      {
        payment_id: 'pay_Ch0000000001', key_prefix: 'trk_live_Ab3dE9x', plan: 'growth', amount_paise: '99900', currency: 'INR', status: 'captured',
        gateway: 'razorpay', link_id: 'plink_Ch00000001', reference_id: 'rn_abcdefabcdefabcdef', applied: 1, reason: '', paid_at: '2026-11-26 10:15:30',
      },
      {
        payment_id: 'pay_Ch0000000002', key_prefix: 'trk_live_Ab3dE9x', plan: 'starter', amount_paise: '39800', currency: 'INR', status: 'captured',
        gateway: 'razorpay', link_id: 'plink_Ch00000001', reference_id: '', applied: 0, reason: 'amount_mismatch', paid_at: '2026-11-26 10:15:30',
      },
    ]);
  });
});
