import { deserialize, serialize } from 'node:v8';
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
import { PredictionBook, type DeliveredRowsState, type StoredRows } from './book.ts';
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
    expect(state.rows.shipments.length).toBe(delivered.size);
    expect(new Set(Array.from(state.rows.shipments, (number) => book.shipments.key(number)))).toEqual(delivered);
    expect(state.rows.keyRefs.length).toBe(state.rows.shipments.length * LEVEL_COUNT);
    expect(state.rows.obsEnds.at(-1)).toBe(state.rows.obs.length);
    // Written over, the observations are packed again on export: each shipment's once.
    const once = bookAt(END_MS);
    fed(once, polls);
    expect(once.exportState().rows.obs).toEqual(state.rows.obs);

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
    expect(book.exportState().rows.shipments.length).toBeGreaterThan(50);
    book.rebuild();
    const { rows } = book.exportState();
    expect(rows.shipments.length).toBe(0);
    expect(rows.obs.length).toBe(0);
    expect(rows.levelKeys).toEqual([]);
  });

  /** Rows "stored" as a checkpoint stores them (a serialized copy), counting reads and releases. */
  function storedCopy(rows: DeliveredRowsState, fail = false) {
    const bytes = serialize(rows);
    const counts = { reads: 0, releases: 0 };
    const stored: StoredRows = {
      read: () => {
        counts.reads++;
        if (fail) throw new Error('cannot read them back');
        return deserialize(bytes) as DeliveredRowsState;
      },
      release: () => { counts.releases++; },
    };
    return { stored, counts };
  }

  it('lets exported rows go once stored, reads them back at a rebuild with those added since in place, as a book that kept them', async () => {
    const polls = await history(1500);
    const half = Math.floor(polls.length / 2);
    const kept = bookAt(END_MS);
    fed(kept, polls);
    const book = bookAt(END_MS, kept.shipments);
    fed(book, polls.slice(0, half));
    const exported = book.exportState();
    const { stored, counts } = storedCopy(exported.rows);
    book.storedAs(exported.rows, stored);
    // The second half: new shipments, and shipments of the first half delivered or polled again.
    fed(book, polls.slice(half));
    expect(counts.reads).toBe(0);
    const model = book.rebuild();
    expect(counts).toEqual({ reads: 1, releases: 1 });
    expect(model.summary).toEqual(kept.rebuild().summary);
    expect(book.exportState()).toEqual(kept.exportState());

    // An export whose rows a rebuild replaced before they were stored: the store is let go, the newer rows kept.
    const late = book.exportState();
    book.rebuild();
    const stale = storedCopy(late.rows);
    book.storedAs(late.rows, stale.stored);
    expect(stale.counts).toEqual({ reads: 0, releases: 1 });
    expect(book.exportState()).toEqual(kept.exportState());
  });

  it('keeps answering with its last model when a timed rebuild cannot read its stored rows back, and says so', async () => {
    const polls = await history(300);
    const errors: Error[] = [];
    let now = END_MS;
    const book = new PredictionBook({ places, workdays, windowDays: 90, clock: () => now, onRebuildError: (err) => errors.push(err) });
    fed(book, polls);
    const model = book.rebuild();
    const exported = book.exportState();
    book.storedAs(exported.rows, storedCopy(exported.rows, true).stored);
    // A model older than the interval: start() rebuilds at once.
    now += DAY_MS;
    book.start(60_000);
    book.stop();
    expect(errors.map((e) => e.message)).toEqual(['cannot read them back']);
    expect(book.model()).toBe(model);
  });
});
