
import type { CarrierPoll } from '../schemas/index.ts';
import { parsePollLine } from './replay-line.ts';
import type { KeyMode } from '../schemas/index.ts';

/** A poll to replay and the key mode it was made for. */
export interface ModePoll {
  poll: CarrierPoll;
  mode: KeyMode;
}

/**
 * One NDJSON line of any replay input: a bare `carrier_poll.v1` (a Kafka message value, a file of
 * polls: mode `live`, as the normalizer assumes for a message without a `mode` header) or a line
 * of the embedded default's raw-poll log, `{"poll": <carrier_poll.v1>, "mode": "live"|"test"}`.
 * Returns the poll or why the line is not one.
 */
export function parseReplayLine(line: string, resolveCarrier: (name: string) => string | null): ModePoll | string {
  // Cheap look before a parse: the log's lines start with {"poll": (JSON.stringify of LoggedPoll).
  const trimmed = line.trimStart();
  if (!trimmed.startsWith('{"poll"') && !/^\{\s*"(poll|mode)"\s*:/.test(trimmed)) {
    const poll = parsePollLine(line, resolveCarrier);
    return typeof poll === 'string' ? poll : { poll, mode: 'live' };
  }
  let value: { poll?: unknown; mode?: unknown };
  try {
    value = JSON.parse(line) as typeof value;
  } catch (err) {
    return `not valid JSON (${(err as Error).message})`;
  }
  if (value.mode !== 'live' && value.mode !== 'test') return `embedded log line: "mode" must be "live" or "test", got ${JSON.stringify(value.mode)}`;
  if (typeof value.poll !== 'object' || value.poll === null) return 'embedded log line: "poll" must be a carrier_poll.v1 object';
  // Re-serialized so the poll goes through the one validating parser every input uses.
  const poll = parsePollLine(JSON.stringify(value.poll), resolveCarrier);
  return typeof poll === 'string' ? poll : { poll, mode: value.mode };
}
