import { Kafka, logLevel, type LogEntry } from 'kafkajs';

export interface KafkaOptions {
  /** Comma-separated host:port list (KAFKA_BROKERS). */
  brokers: string;
  clientId: string;
  /** Where kafkajs' own log lines go; default: errors to stderr. */
  log?: (level: 'error' | 'warn' | 'info', message: string) => void;
}

type KafkaLog = NonNullable<KafkaOptions['log']>;

/** A line repeated within this window is held back and counted, then reported with the count. */
const REPEAT_WINDOW_MS = 10_000;

/**
 * While a broker is down kafkajs repeats the same few lines several times a second (every retry of
 * every connection): each distinct line passes at most once per window, with how many were held back.
 */
export function withoutRepeats(log: KafkaLog, clock: () => number = Date.now): KafkaLog {
  const seen = new Map<string, { at: number; held: number }>();
  return (level, message) => {
    const key = `${level} ${message}`;
    const now = clock();
    const last = seen.get(key);
    if (last && now - last.at < REPEAT_WINDOW_MS) {
      last.held += 1;
      return;
    }
    log(level, last?.held ? `${message} (and ${last.held} more like it in ${Math.round((now - last.at) / 1000)} s)` : message);
    seen.set(key, { at: now, held: 0 });
    // Lines carry no ids or times, so the distinct ones are few; forget them all if that ever changes.
    if (seen.size > 1_000) seen.clear();
  };
}

/** A kafkajs client whose log lines go through the caller (kafkajs is noisy while a broker is down). */
export function createKafka(options: KafkaOptions): Kafka {
  const log = withoutRepeats(options.log ?? ((level, message) => { if (level === 'error') console.error(message); }));
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers.split(',').map((b) => b.trim()).filter(Boolean),
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 200, retries: 3, maxRetryTime: 2_000 },
    logLevel: logLevel.WARN,
    logCreator: () => ({ level, log: entry }: { level: logLevel; log: LogEntry['log'] }) => {
      const name = level === logLevel.ERROR ? 'error' : level === logLevel.WARN ? 'warn' : 'info';
      log(name, `kafka: ${entry.message}`);
    },
  });
}
