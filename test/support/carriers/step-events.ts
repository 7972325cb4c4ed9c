/** The tracking events a round trip made of a story's steps, found by each step's instant. */
import { expect } from 'vitest';
import type { SandboxStep } from '../../../lib/sandbox/types.ts';
import type { EventCode, NdrReason, Status, TrackingEvent, TrackingRecord } from '../../../lib/schemas/index.ts';

/** What a step must become: its event code (or one of several), and its status and NDR reason where given. */
export interface StepEvent {
  code: EventCode | readonly EventCode[];
  status?: Status;
  reason?: NdrReason | null;
}

/** The event of the scan written for `step` (every step of a test story has its own instant). */
export function eventAt(record: TrackingRecord, step: SandboxStep): TrackingEvent {
  const at = new Date(step.at).toISOString();
  const event = record.events.find((e) => e.timestamp === at);
  if (!event) throw new Error(`no event at ${at} for ${step.kind}`);
  return event;
}

/** Checks each step's event at its UTC instant against what it must become. */
export function expectStepEvents(record: TrackingRecord, expectations: readonly (readonly [SandboxStep, StepEvent])[]): void {
  for (const [step, want] of expectations) {
    const event = eventAt(record, step);
    expect([want.code].flat(), `${step.kind} at ${event.timestamp}`).toContain(event.code);
    if (want.status !== undefined) expect({ kind: step.kind, status: event.status }).toEqual({ kind: step.kind, status: want.status });
    if (want.reason !== undefined) expect({ kind: step.kind, reason: event.reason_code }).toEqual({ kind: step.kind, reason: want.reason });
  }
}
