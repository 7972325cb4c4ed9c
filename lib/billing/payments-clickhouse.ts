import type { ClickHouseClient } from '@clickhouse/client';
import { toClickHouseDateTime } from '../clickhouse/datetime.ts';
import type { PaymentRecord } from './payments.ts';
import type { PaymentReport } from './settle.ts';

/** A settled payment as a row of ClickHouse `payments` (migrations/0016_payments.sql). Pure. */
export function paymentRow(record: PaymentRecord): Record<string, unknown> {
  return {
    payment_id: record.id,
    key_prefix: record.key_prefix ?? '',
    plan: record.plan ?? '',
    amount_paise: record.amount_paise,
    currency: record.currency,
    status: record.status,
    gateway: record.gateway,
    link_id: record.link_id,
    reference_id: record.reference_id ?? '',
    applied: record.applied ? 1 : 0,
    reason: record.reason ?? '',
    paid_at: toClickHouseDateTime(Date.parse(record.paid_at)),
  };
}

/** One insert per payment: payments are rare, so no batching is needed. */
export class ClickHousePaymentReport implements PaymentReport {
  private readonly client: ClickHouseClient;
  constructor(client: ClickHouseClient) {
    this.client = client;
  }

  async write(record: PaymentRecord): Promise<void> {
    await this.client.insert({ table: 'payments', values: [paymentRow(record)], format: 'JSONEachRow' });
  }
}
