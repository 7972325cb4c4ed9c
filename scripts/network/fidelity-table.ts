/**
 * The simulated network against published figures, as the Markdown table of
 * docs/engineers/network-model.md (lib/network/fidelity.ts): a fresh history, every figure, its band.
 *
 *   node scripts/network/fidelity-table.ts [--journeys 20000] [--seed 1] [--end 2026-11-27T00:00:00Z]
 */
import { parseArgs } from 'node:util';
import { loadCalendar } from '../../lib/calendar/index.ts';
import { loadNetworkConfig } from '../../lib/network/config.ts';
import { fidelityRows, fidelityTable } from '../../lib/network/fidelity.ts';
import { planHistory } from '../../lib/network/history.ts';
import { loadPlaces } from '../../lib/places/index.ts';
import { seededRandom } from '../../lib/random/seeded-random.ts';
import { SANDBOX_LANE_PINCODES } from '../../lib/sandbox/history.ts';

const { values } = parseArgs({ options: { journeys: { type: 'string', default: '20000' }, seed: { type: 'string', default: '1' }, end: { type: 'string', default: '2026-11-27T00:00:00Z' } } });
const config = loadNetworkConfig();
const shipments = Number(values.journeys);
const journeys = [...planHistory(
  { shipments, days: 90, seed: Number(values.seed), endMs: Date.parse(values.end!), sandboxLanes: SANDBOX_LANE_PINCODES, seededRandom },
  config, loadCalendar(), loadPlaces(),
)];
console.log(`${shipments.toLocaleString('en-US')} journeys, seed ${values.seed}, 90 days to ${values.end}:\n`);
console.log(fidelityTable(fidelityRows(journeys, config)));
