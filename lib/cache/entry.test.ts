import { describe, expect, it } from 'vitest';
import { computeInsights, toTrackingRecord } from '../insights/index.ts';
import { normalized } from '../testutil/product.ts';
import { JOURNEYS, journeyPoll } from '../testutil/polls.ts';
import { answerJson, compactShipment, entryBytes, entryOfText, entryText } from './entry.ts';

const lane = { median_transit_days: 3.2, sample_size: 31 };

describe('compact cache entry', () => {
  it.each(Object.keys(JOURNEYS))('answers exactly what JSON.stringify of the full record writes (%s, every flag, with and without a lane)', (carrier) => {
    const shipment = normalized(journeyPoll(carrier, 7));
    const entry = compactShipment(shipment);
    for (const [cached, stale] of [[false, false], [true, false], [true, true]] as const) {
      for (const benchmark of [null, lane]) {
        const nowMs = Date.UTC(2026, 10, 21);
        const full = toTrackingRecord(shipment.record, shipment.facts, { nowMs, lane: benchmark, cached, stale });
        // Insights from the entry's few facts are the full record's.
        const insights = computeInsights(entry.answer, entry.facts, nowMs, benchmark);
        expect(insights).toEqual(full.insights);
        expect(answerJson(entry, cached, stale, JSON.stringify(insights))).toBe(JSON.stringify(full));
      }
    }
  });

  it('is stored as text and read back whole; other text reads as nothing', () => {
    const entry = { shipment: compactShipment(normalized(journeyPoll('delhivery', 3))), polledAtMs: 17 };
    expect(entryOfText(entryText(entry))).toEqual(entry);
    expect(entryOfText(entryText({ shipment: null, polledAtMs: 5 }))).toEqual({ shipment: null, polledAtMs: 5 });
    expect(entryOfText('{"shipment":null,"polledAtMs":1}')).toBeNull();
    expect(entryOfText(entryText(entry).slice(0, -40))).toBeNull();
    expect(entryOfText('not json')).toBeNull();
  });

  it('costs its text and ~600 bytes, not the object graph', () => {
    const entry = compactShipment(normalized(journeyPoll('bluedart', 4)));
    expect(entryBytes(entry)).toBe(entry.json.length + 600);
    const devanagari = `${entry.json.slice(0, -1)},"x":"दिल्ली"}`;
    expect(entryBytes({ ...entry, json: devanagari })).toBe(2 * devanagari.length + 600);
  });
});
