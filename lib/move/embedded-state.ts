import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedAccessDir } from '../access/index.ts';
import { embeddedPaymentsDir } from '../billing/index.ts';
import { embeddedIdempotencyDir } from '../idempotency/index.ts';
import { pollLogPath } from '../store/poll-log.ts';

/** The embedded store's parts under DATA_DIR that `store move` carries (push's Kv holds the analyzer's too). */
export function embeddedStoreDirs(dataDir: string): { access: string; payments: string; idempotency: string; push: string } {
  return {
    access: embeddedAccessDir(dataDir), payments: embeddedPaymentsDir(dataDir), idempotency: embeddedIdempotencyDir(dataDir), push: join(dataDir, 'push'),
  };
}

/** Written into DATA_DIR by a finished `store move`: where its state went, and when. */
export function movedMarkerPath(dataDir: string): string {
  return join(dataDir, 'moved.json');
}

export interface MovedMarker {
  moved_at: string;
  /** Redis and Kafka as the move was told them (without passwords). */
  redis: string;
  kafka: string | null;
  namespace: string;
  topic: string | null;
  /** False when moved without KAFKA_BROKERS: the raw-poll log is still to be sent. */
  polls_moved: boolean;
}

export function readMovedMarker(dataDir: string): MovedMarker | null {
  const path = movedMarkerPath(dataDir);
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) as MovedMarker : null;
}

export function writeMovedMarker(dataDir: string, marker: MovedMarker): void {
  writeFileSync(movedMarkerPath(dataDir), JSON.stringify(marker, null, 2) + '\n');
}

/** A store directory holding any file: a journal, a snapshot (an empty store has neither). */
function holdsFiles(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).some((name) => name.endsWith('.json') || name.endsWith('.ndjson'));
}

/**
 * What of an embedded store DATA_DIR holds that no `store move` carried away: the names of its
 * parts with state (keys, payments, idempotency answers, push and analyses, the raw-poll log);
 * empty when there is none or when it was moved. A start against the services says so in its banner.
 */
export function unmovedEmbeddedState(dataDir: string, options: { pollLog: boolean } = { pollLog: true }): string[] {
  if (!existsSync(dataDir)) return [];
  const marker = readMovedMarker(dataDir);
  const dirs = embeddedStoreDirs(dataDir);
  const parts: string[] = [];
  if (!marker) {
    if (holdsFiles(dirs.access)) parts.push('keys');
    if (holdsFiles(dirs.payments)) parts.push('payments');
    if (holdsFiles(dirs.push)) parts.push('watches, webhooks and analyses');
  }
  const log = pollLogPath(dataDir);
  if (options.pollLog && !marker?.polls_moved && existsSync(log) && statSync(log).size > 0) parts.push('the raw-poll log');
  return parts;
}

/**
 * The banner's line for a start against the services beside an unmoved embedded store, or null.
 * `pollLog`: whether the raw-poll log counts (with Kafka; with Redis alone the embedded pipeline
 * still writes and reads it).
 */
export function unmovedStoreNotice(dataDir: string, options: { pollLog: boolean }): string | null {
  const parts = unmovedEmbeddedState(dataDir, options);
  if (parts.length === 0) return null;
  return `${dataDir} holds an embedded store that was not moved here (${parts.join(', ')}): its keys answer invalid_api_key. ` +
    'Stop this start and run npm run cli -- store move (docs/operators/running.md)';
}
