import { describe, expect, it } from 'vitest';
import { loadCalendar } from '../calendar/index.ts';
import { normalizePoll } from '../normalize/index.ts';
import { loadPlaces } from '../places/index.ts';
import { product } from '../testutil/product.ts';
import { HOUR_MS } from '../time/index.ts';
import type { StageEpisode } from './episodes.ts';
import { placeLookupOf } from './places.ts';
import { POSITIONS } from './position.ts';
import { latestPositionOf, predictorOf, queryFactsOf, queryOf, splitAtNewPlaces } from './records.ts';
import { otherNetworkPolls } from './testutil/other-network.ts';

const T = Date.parse('2026-06-01T08:00:00+05:30');
const at = (hours: number) => T + hours * HOUR_MS;
const code = (position: (typeof POSITIONS)[number]) => POSITIONS.indexOf(position);

describe('the in-transit clock restarts where the parcel reaches a new place', () => {
  it('splits in-transit episodes at each new known place, never at an unknown scan, and leaves other stages whole', () => {
    const episodes: StageEpisode[] = [
      { stage: 'awaiting_pickup', enteredMs: at(-10), leftMs: at(0) },
      { stage: 'in_transit', enteredMs: at(0), leftMs: at(50) },
      { stage: 'out_for_delivery', enteredMs: at(50), leftMs: at(53) },
    ];
    const scans = [at(-10), at(0), at(4), at(20), at(22), at(30), at(40), at(50)];
    const positions = Uint8Array.from([
      code('unknown'), code('origin'), code('origin'), code('en_route'), code('unknown'), code('en_route'), code('destination_city'), code('delivering_branch'),
    ]);
    expect(splitAtNewPlaces(episodes, scans, positions)).toEqual([
      episodes[0],
      { stage: 'in_transit', enteredMs: at(0), leftMs: at(20) },
      // The unknown scan at 22 h and the same place again at 30 h change nothing.
      { stage: 'in_transit', enteredMs: at(20), leftMs: at(40) },
      { stage: 'in_transit', enteredMs: at(40), leftMs: at(50) },
      episodes[2],
    ]);
    // The current episode (not left yet) splits the same way; without positions read, nothing splits.
    const moving = [{ stage: 'in_transit' as const, enteredMs: at(0), leftMs: null }];
    expect(splitAtNewPlaces(moving, scans.slice(0, 4), positions.slice(0, 4)).at(-1)).toEqual({ stage: 'in_transit', enteredMs: at(20), leftMs: null });
    expect(splitAtNewPlaces(moving, scans.slice(0, 4), new Uint8Array(4))).toEqual(moving);
  });

  it('a lookup reads the same clock: an in-transit record past its origin counts from its arrival at its latest place', () => {
    const places = placeLookupOf(loadPlaces());
    const polls = [...otherNetworkPolls({ shipments: 60, days: 10, seed: 5, calendar: loadCalendar() })];
    let later = 0;
    for (const poll of polls) {
      const result = normalizePoll(poll, product.rules);
      if (result.kind !== 'found' || result.shipment.facts.stage !== 'in_transit') continue;
      const { record, facts } = result.shipment;
      const position = latestPositionOf(record, places);
      if (position === 'origin' || position === 'unknown') continue;
      const q = queryOf(record, facts, 'live', Date.parse(record.last_polled_at), places)!;
      const pickedUpMs = Date.parse(record.milestones.picked_up_at!);
      // From the pickup when its first known place is already past the origin, else from a later scan of its own.
      expect(q.stageEnteredMs).toBeGreaterThanOrEqual(pickedUpMs);
      expect(record.events.map((e) => Date.parse(e.timestamp))).toContain(q.stageEnteredMs);
      if (q.stageEnteredMs > pickedUpMs) later++;
      // A predictor's facts of a record (what a push's promise is scored with) are read the same way;
      // without place names there is no position and no split.
      expect(predictorOf(() => null, places).factsOf(record, facts)).toMatchObject({ position, stageEnteredMs: q.stageEnteredMs });
      expect(queryFactsOf(record, facts)).toMatchObject({ position: null, stageEnteredMs: pickedUpMs });
    }
    expect(later).toBeGreaterThan(10);
  });
});
