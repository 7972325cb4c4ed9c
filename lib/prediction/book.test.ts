import { ShipmentNumbers } from '../compact/shipment-numbers.ts';
import { describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { loadNetworkConfig } from '../network/config.ts';
import { normalizePoll } from '../normalize/index.ts';
import { loadPlaces } from '../places/index.ts';
import { historyPolls } from '../sandbox/history.ts';
import type { CarrierPoll } from '../schemas/index.ts';
import { product } from '../testutil/product.ts';
import { DAY_MS } from '../time/index.ts';
import { PredictionBook } from './book.ts';
import { LEVEL_COUNT } from './model.ts';
import { placeLookupOf } from './places.ts';
import { WorkdayIndex } from './workdays.ts';

const END_MS = Date.parse('2026-06-01T00:00:00+05:30');
const places = placeLookupOf(loadPlaces());
const workdays = new WorkdayIndex(loadCalendar());

async function history(shipments: number): Promise<CarrierPoll[]> {
  const polls: CarrierPoll[] = [];
  for await (const { polls: journey } of historyPolls({
    config: loadNetworkConfig(), calendar: loadCalendar(), places: loadPlaces(), shipments, days: 60, seed: 11, endMs: END_MS,
  })) polls.push(...journey);
  return polls;
}

function bookAt(nowMs: number, shipments?: ShipmentNumbers): PredictionBook {
  return new PredictionBook({ places, workdays, windowDays: 90, clock: () => nowMs, shipments });
}

/** Feeds every poll, as the embedded pipeline does (a delivered shipment again at each later poll); returns the delivered keys. */
function fed(book: PredictionBook, polls: readonly CarrierPoll[]): Set<string> {
  const delivered = new Set<string>();
  for (const poll of polls) {
    const result = normalizePoll(poll, product.rules);
    if (result.kind !== 'found') continue;
    book.add(result.shipment, 'test');
    if (result.shipment.facts.stage === 'delivered') delivered.add(`test:${poll.carrier}:${result.shipment.record.awb}`);
  }
  return delivered;
}

describe('the prediction book', () => {
  it('keeps one row per delivered shipment however often it is fed, and round-trips its columns', async () => {
    const polls = await history(1500);
    const book = bookAt(END_MS);
    const delivered = fed(book, polls);
    // Fed twice over: the rows are written over, not added.
    fed(book, polls);
    const state = book.exportState();
    expect(delivered.size).toBeGreaterThan(500);
    expect(state.shipments.length).toBe(delivered.size);
    expect(new Set(Array.from(state.shipments, (number) => book.shipments.key(number)))).toEqual(delivered);
    expect(state.keyRefs.length).toBe(state.shipments.length * LEVEL_COUNT);
    expect(state.obsEnds.at(-1)).toBe(state.obs.length);
    // Written over, the observations are packed again on export: each shipment's once.
    const once = bookAt(END_MS);
    fed(once, polls);
    expect(once.exportState().obs).toEqual(state.obs);

    const model = book.rebuild();
    // A fresh book sharing the numbering (a checkpoint restores the shipment index's first).
    const again = bookAt(END_MS, book.shipments);
    again.importState(book.exportState());
    expect(again.exportState()).toEqual(book.exportState());
    expect(() => bookAt(END_MS).importState(book.exportState())).toThrow(/not numbered/);
    // The imported rows build the same model: the same answer to every moving shipment's poll.
    const rebuilt = again.rebuild();
    let answered = 0;
    for (const poll of polls.slice(-400)) {
      const result = normalizePoll(poll, product.rules);
      if (result.kind !== 'found' || result.shipment.facts.stage !== 'in_transit') continue;
      const asOf = Date.parse(poll.polled_at);
      const expected = book.predictor.predictRecord(result.shipment.record, result.shipment.facts, 'test', asOf);
      if (expected !== null) answered++;
      expect(again.predictor.predictRecord(result.shipment.record, result.shipment.facts, 'test', asOf)).toEqual(expected);
    }
    expect(rebuilt.summary.cells).toBe(model.summary.cells);
    expect(answered).toBeGreaterThan(10);
  });

  it('forgets at a rebuild the shipments delivered before its window', async () => {
    const polls = await history(300);
    const book = bookAt(END_MS + 200 * DAY_MS);
    fed(book, polls);
    expect(book.exportState().shipments.length).toBeGreaterThan(50);
    book.rebuild();
    const state = book.exportState();
    expect(state.shipments.length).toBe(0);
    expect(state.obs.length).toBe(0);
    expect(state.levelKeys).toEqual([]);
  });
});
