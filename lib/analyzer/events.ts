/** The `analysis.completed` webhook event (contracts.md): sent through push's event path. Pure. */
import { createHash } from 'node:crypto';
import type { WebhookEvent } from '../push/index.ts';
import type { AnalysisDoc } from './store.ts';

/** Stable per analysis: an event derived again after a crash is the same event. */
export function analysisEventId(prefix: string, id: string): string {
  return `evt_${createHash('sha256').update(`${prefix}|analysis.completed|${id}`).digest('base64url').slice(0, 26)}`;
}

export function analysisCompletedEvent(doc: AnalysisDoc): WebhookEvent {
  const timestamp = new Date(doc.completed_ms ?? doc.created_ms).toISOString();
  const body = JSON.stringify({
    type: 'analysis.completed',
    timestamp,
    data: { id: doc.id, status: doc.status, totals: doc.report?.totals ?? null },
  });
  return {
    schema: 'webhook_event.v1',
    id: analysisEventId(doc.key_prefix, doc.id),
    key_prefix: doc.key_prefix, mode: doc.mode, type: 'analysis.completed', carrier: null, awb: null,
    // Per key, from 1: the endpoint's queue of analysis events keeps them in order.
    sequence: doc.event_sequence ?? 1, created_at: timestamp, body,
  };
}
