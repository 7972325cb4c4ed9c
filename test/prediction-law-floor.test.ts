// The bench's floor on the second generator (bench/prediction-law-floor.ts) bounds each shipment's line
// haul from its hub scans; a bound that excluded the true haul would make the floor a fiction.
import { describe, expect, it } from 'vitest';
import { haulBounds } from '../bench/prediction-law-floor.ts';
import { loadCalendar } from '../lib/calendar/index.ts';
import { otherNetworkPolls, type OtherShipment } from '../lib/prediction/testutil/other-network.ts';
import { HOUR_MS } from '../lib/time/index.ts';

describe("the second generator's law floor", () => {
  it('bounds the haul around the true one at every instant between pickup and arrival, from the scans seen by then', () => {
    const shipments: OtherShipment[] = [];
    for (const _ of otherNetworkPolls({ shipments: 400, days: 30, seed: 5, calendar: loadCalendar(), onShipment: (s) => shipments.push(s) }));
    let bounded = 0;
    let checked = 0;
    for (const shipment of shipments) {
      const pickup = shipment.scans.find((s) => s.kind === 'pickup')!.ms;
      const arrival = shipment.scans.find((s) => s.where === 'hub');
      if (!arrival) continue; // lost on the way
      const haul = (arrival.ms - pickup) / HOUR_MS;
      for (const scan of shipment.scans.filter((s) => s.ms > pickup && s.ms < arrival.ms)) {
        const [low, high] = haulBounds(shipment, pickup, scan.ms);
        expect(low).toBeLessThanOrEqual(haul);
        expect(high).toBeGreaterThanOrEqual(haul);
        checked++;
        if (Number.isFinite(high) && low > (scan.ms - pickup) / HOUR_MS) bounded++;
      }
    }
    // The scans' places do bound it, on both sides, for many of them: the floor knows what a poll shows.
    expect(checked).toBeGreaterThan(500);
    expect(bounded / checked).toBeGreaterThan(0.2);
  });
});
