/**
 * What a command is given to run with: the environment it may read and where it writes. Its own
 * module so that the commands and the dispatcher (cli.ts) both import it and not each other.
 */
import type { Env } from '../../../lib/config/index.ts';

export type CliEnv = Partial<Pick<Env,
  'PORT' | 'ADMIN_TOKEN' | 'TRACKING_API_KEY' | 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'DATA_DIR' | 'KAFKA_BROKERS' | 'CONFIG_DIR' | 'REDIS_URL'>>;

export interface CliIo {
  /** The variables the CLI uses, as `loadEnv()` read them. */
  env: CliEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}
