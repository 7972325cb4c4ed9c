import type { Kafka, LogEntry, logLevel } from 'kafkajs';
import { kafkajs } from './kafkajs.ts';
import { withoutRepeats, type LineLog } from '../logging/index.ts';

export interface KafkaOptions {
  /** Comma-separated host:port list (KAFKA_BROKERS). */
  brokers: string;
  clientId: string;
  /** Where kafkajs' own log lines go; default: errors to stderr. */
  log?: LineLog;
}

/**
 * kafkajs logs at error level every failed response it then retries itself. Two of them are the
 * normal state of a healthy first start, not failures: a consumer group's or a transactional
 * producer's coordinator is not elected yet on a new broker or a new group (GroupCoordinator /
 * FindCoordinator, InitProducerId answer "coordinator not available" / "load in progress" until
 * the broker has created __consumer_offsets and __transaction_state). Those read as expected, at
 * info; the same request failing otherwise stays an error.
 */
const COORDINATOR_REQUEST = /^Response (GroupCoordinator|FindCoordinator|InitProducerId|JoinGroup|SyncGroup|OffsetFetch|Heartbeat)\(/;
const NOT_YET = /coordinator is not available|coordinator is loading|not the correct coordinator/i;
/**
 * A consumer whose group coordinator is still loading crashes with that retriable error and
 * restarts itself (kafkajs consumer/index.js onCrash): two error lines, "Crash: …" and "Restarting
 * the consumer in …ms", on a healthy first start against a new broker. Expected when the crash is
 * one of the states above; the restart line that follows such a crash too.
 */
// The crash names the error, or (kafkajs having retried it first, as on a loaded machine where the
// election takes longer than the retries) KafkaJSNumberOfRetriesExceeded with the same message.
const CRASH = /^Crash: KafkaJS(?:ProtocolError|NumberOfRetriesExceeded): (.*)$/;
const RESTARTING = /^Restarting the consumer in \d+ms$/;

/**
 * The clients retry 3 times, idempotent producers included: the poll bus spools to disk when the
 * retries run out (KafkaBus), which an unbounded retry would never let happen. kafkajs warns about
 * that choice on every idempotent producer; it is this project's setting, said once at info.
 */
const BOUNDED_RETRIES = 'Limiting retries for the idempotent producer may invalidate EoS guarantees';

export function expectedStartState(entry: { message: string; error?: unknown }): string | null {
  const crash = CRASH.exec(entry.message);
  if (crash && NOT_YET.test(crash[1]!)) return `consumer waiting for its group coordinator (${crash[1]}): expected on a new broker or group; restarting`;
  if (entry.message === BOUNDED_RETRIES) {
    return 'idempotent producer with bounded retries (this project\'s setting: a send that still fails after them fails to its caller, ' +
      'e.g. the poll bus spools it to disk)';
  }
  const match = COORDINATOR_REQUEST.exec(entry.message);
  if (!match || typeof entry.error !== 'string' || !NOT_YET.test(entry.error)) return null;
  const what = match[1] === 'InitProducerId' ? 'a producer id' : 'a consumer group coordinator';
  return `waiting for ${what} (${entry.error}): expected on a new broker or group while Kafka elects it; retrying`;
}

/**
 * kafkajs 2.2.4's request queue schedules its throttle check at `throttledUntil − Date.now()` with
 * `throttledUntil` still -1 when no broker ever throttled (network/requestQueue/index.js
 * scheduleCheckPendingRequests): a delay of minus the epoch, which Node 24 clamps to 1 ms and
 * reports as TimeoutNegativeWarning. Harmless and not ours to fix in node_modules, so exactly that
 * warning, raised from kafkajs' request queue, is dropped; every other warning is emitted as before.
 */
let negativeTimeoutFiltered = false;
export function dropKafkajsNegativeTimeoutWarning(): void {
  if (negativeTimeoutFiltered) return;
  negativeTimeoutFiltered = true;
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    if (type === 'TimeoutNegativeWarning' && /kafkajs[\\/]src[\\/]network[\\/]requestQueue/.test(new Error().stack ?? '')) return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}

/**
 * The start-state filter of one client: expectedStartState, and a consumer's "Restarting the
 * consumer" line said at info when it follows an expected crash of that group (any other restart
 * stays an error).
 */
export function startStateFilter(): (entry: { message: string; error?: unknown; groupId?: unknown }) => string | null {
  const expectedCrash = new Set<unknown>();
  return (entry) => {
    const expected = expectedStartState(entry);
    if (CRASH.test(entry.message)) {
      if (expected) expectedCrash.add(entry.groupId);
      else expectedCrash.delete(entry.groupId);
    }
    if (expected) return expected;
    if (RESTARTING.test(entry.message) && expectedCrash.delete(entry.groupId)) return `${entry.message.toLowerCase()} (after the expected crash above)`;
    return null;
  };
}

/** A kafkajs client whose log lines go through the caller (kafkajs is noisy while a broker is down). */
export function createKafka(options: KafkaOptions): Kafka {
  dropKafkajsNegativeTimeoutWarning();
  const log = withoutRepeats(options.log ?? ((level, message) => { if (level === 'error') console.error(message); }));
  const startState = startStateFilter();
  const library = kafkajs();
  return new library.Kafka({
    clientId: options.clientId,
    brokers: options.brokers.split(',').map((b) => b.trim()).filter(Boolean),
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 200, retries: 3, maxRetryTime: 2_000 },
    logLevel: library.logLevel.WARN,
    logCreator: () => ({ level, log: entry }: { level: logLevel; log: LogEntry['log'] }) => {
      const expected = startState(entry);
      if (expected) {
        log('info', `kafka: ${expected}`);
        return;
      }
      const name = level === library.logLevel.ERROR ? 'error' : level === library.logLevel.WARN ? 'warn' : 'info';
      log(name, `kafka: ${entry.message}`);
    },
  });
}
