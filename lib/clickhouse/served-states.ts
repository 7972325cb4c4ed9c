/**
 * Who serves where, in distributed mode (lib/prediction/served.ts): the state-pair keys of the
 * deliveries in a model version's window, read from prediction_observations beside the version's
 * cells, so `/v1/estimate` leaves out a carrier that delivered nothing into the destination state.
 */
import { ServedStates } from '../prediction/served.ts';
import { DAY_S } from '../time/index.ts';
import type { ClickHouseClient } from './client.ts';
import { sqlInt } from './sql.ts';

/** The served states of model `version` (its model_at and window_days); none when the version is not listed. */
export async function readServedStates(client: ClickHouseClient, version: number, signal?: AbortSignal): Promise<ServedStates> {
  const [model] = await (await client.query({
    query: `SELECT toUInt32(model_at) AS at, window_days FROM prediction_models WHERE version = ${sqlInt(version)} LIMIT 1`,
    format: 'JSONEachRow',
    abort_signal: signal,
  })).json<{ at: string | number; window_days: string | number }>();
  if (!model) return ServedStates.NONE;
  const endS = Number(model.at);
  const startS = endS - Number(model.window_days) * DAY_S;
  // The deliveries the version learned from: observed within its window (as the rebuild reads them).
  const rows = await (await client.query({
    query: `SELECT DISTINCT key_state FROM prediction_observations
      WHERE key_state != '' AND as_of >= toDateTime(${sqlInt(startS)}, 'UTC') AND delivered_at <= toDateTime(${sqlInt(endS)}, 'UTC')`,
    format: 'JSONEachRow',
    abort_signal: signal,
  })).json<{ key_state: string }>();
  return ServedStates.fromStateKeys(rows.map((r) => r.key_state));
}
