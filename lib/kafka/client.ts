import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import { withoutRepeats, type LineLog } from '../logging/index.ts';

export interface KafkaOptions {
  /** Comma-separated host:port list (KAFKA_BROKERS). */
  brokers: string;
  clientId: string;
  /** Where kafkajs' own log lines go; default: errors to stderr. */
  log?: LineLog;
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
