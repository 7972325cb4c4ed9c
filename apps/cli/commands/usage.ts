/** The CLI's usage text and the error that makes it print it (exit code 2). */

export const USAGE = `Usage: npm run cli -- <command> [options]

Commands (the admin HTTP API unless said otherwise):
  keys create --plan <trial|starter|growth|business> --mode <live|test> --email <address>
              [--lookups-limit N] [--daily-quota N] [--burst N]
              [--period-start ISO] [--period-end ISO]
  keys show <key_prefix>
  keys suspend <key_prefix>
  keys resume <key_prefix>
  keys revoke <key_prefix>            (final)
  keys renew <key_prefix> [--plan <plan>]
  lanes <origin_pincode> <destination_pincode> [--key trk_…] [--json]
              (the public API with an API key or TRACKING_API_KEY; one lookup)
  analyze <shipments.csv|.json> [--key trk_…] [--name N] [--out report.json] [--json]
              (the shipment analyzer: progress, a summary table, the report written to a file)
  sandbox history --shipments N [--days D] [--seed S] [--end ISO] [--out F.jsonl] [--into-stores [--topic T]]
              (the simulated network's raw-poll log, generated here; no API call)
  sql <question> [--mode live|test] [--param name=value] [--format table|csv|json]
              (a question of the analysts' guide, docs/analysts.md, against CLICKHOUSE_URL; --list)
  predict backtest (--polls <file.jsonl> | --from-embedded | --from-kafka | --from-clickhouse)
              --split <ISO> [--predictions <out.jsonl>] [--json]
              (scores the delivery model on stored polls; no API call; predict --help for more)
  store move [--force]
              (the embedded store under DATA_DIR into REDIS_URL, its raw-poll log into KAFKA_BROKERS)
  backup <dir>
              (a consistent copy of the embedded store under DATA_DIR, taken while it runs)

Options:
  --url <base>     admin API base URL (default http://127.0.0.1:\${PORT:-3000})
  --token <token>  admin token (default: the ADMIN_TOKEN environment variable)
  -h, --help       show this text

Prints the API's JSON answer on success. Exit codes: 0 success, 1 the API refused or could not
be reached (its message on stderr), 2 usage error.
`;

/** A mistake in the command line itself: reported with the usage text, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
