/** `npm run cli -- lanes`: an empty or dated answer says when the API read its figures and reads them next. */
import { describe, expect, it } from 'vitest';
import { formatLaneTable } from './commands/lanes.ts';

const EMPTY = { origin_prefix: '110', destination_prefix: '560', window_days: 90, carriers: [], fastest: null, most_reliable: null };
const NOW = Date.parse('2026-11-20T07:30:42Z');

describe('lanes: the freshness of the figures', () => {
  it('an empty lane from the API\'s copy names when it was read and when it is read next', () => {
    const text = formatLaneTable(EMPTY as never, { readAtMs: NOW - 42_000, nextReadAtMs: NOW + 18_000, nowMs: NOW });
    expect(text).toContain('(no closed shipments on this lane in the window)');
    expect(text).toContain('Figures as cached by the API at 07:30:00 UTC (42 s ago); it reads them again at 07:31:00 UTC (in 18 s). '
      + 'The normalizer recomputes them once a minute, so a shipment closed in the last 2 minutes may not count yet.');
  });

  it('a copy past its age is read again at the next request; figures computed at the request say so', () => {
    expect(formatLaneTable(EMPTY as never, { readAtMs: NOW - 90_000, nextReadAtMs: NOW - 30_000, nowMs: NOW })).toContain('(90 s ago); it reads them again at the next request.');
    expect(formatLaneTable(EMPTY as never)).toContain('Figures computed at this request.');
  });
});
