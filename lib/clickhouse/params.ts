/**
 * Query parameters (`{name:Type}`) bound into SQL text. Current ClickHouse binds them itself
 * (`query_params`), 18.16 (the Debian server the tests use) has no query parameters at all: the
 * analysts' questions are written with them, and every runner (the `cli sql` command, the tests)
 * binds them here the same way on every release, each value as a literal of its declared type
 * through the escaping of sql.ts.
 */
import { sqlString } from './sql.ts';

const PARAM = /\{([A-Za-z_][A-Za-z0-9_]*):([A-Za-z0-9_()]+)\}/g;
const INTEGER = /^(U?Int(8|16|32|64))$/;

export class QueryParamError extends Error {
  override name = 'QueryParamError';
}

/** The parameters a statement names, with their declared types, in order of first use. */
export function queryParams(sql: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [, name, type] of sql.matchAll(PARAM)) if (!found.has(name!)) found.set(name!, type!);
  return found;
}

function literal(name: string, type: string, value: string): string {
  if (type === 'String') return sqlString(value);
  if (INTEGER.test(type)) {
    if (!/^-?\d+$/.test(value) || (type.startsWith('U') && value.startsWith('-')) || !Number.isSafeInteger(Number(value))) {
      throw new QueryParamError(`--param ${name}: ${JSON.stringify(value)} is not a whole number (${type})`);
    }
    return `to${type}(${value})`;
  }
  if (type === 'Float64') {
    if (!/^-?\d+(\.\d+)?$/.test(value)) throw new QueryParamError(`--param ${name}: ${JSON.stringify(value)} is not a number`);
    return `toFloat64(${value})`;
  }
  if (type === 'Date') {
    if (!/^\d{4}-\d\d-\d\d$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
      throw new QueryParamError(`--param ${name}: ${JSON.stringify(value)} is not a date (YYYY-MM-DD)`);
    }
    return `toDate(${sqlString(value)})`;
  }
  if (type === 'DateTime') {
    // UTC always: the server's own time zone would move a window's end by its offset.
    const iso = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(Z|\+00:00)?$/.exec(value);
    if (!iso || Number.isNaN(Date.parse(`${iso[1]}T${iso[2]}Z`))) {
      throw new QueryParamError(`--param ${name}: ${JSON.stringify(value)} is not a UTC date-time (YYYY-MM-DD hh:mm:ss, or ISO ending in Z)`);
    }
    return `toDateTime(${sqlString(`${iso[1]} ${iso[2]}`)}, 'UTC')`;
  }
  throw new QueryParamError(`{${name}:${type}}: parameters of type ${type} are not supported (String, Int*, UInt*, Float64, Date, DateTime)`);
}

/** The statement with each `{name:Type}` replaced by its value as a literal; every parameter must have a value. */
export function bindQueryParams(sql: string, values: Readonly<Record<string, string>>): string {
  const missing = [...queryParams(sql).keys()].filter((name) => values[name] === undefined);
  if (missing.length) {
    throw new QueryParamError(`no value for ${missing.map((m) => `{${m}}`).join(', ')}: pass ${missing.map((m) => `--param ${m}=…`).join(' ')}`);
  }
  return sql.replace(PARAM, (_match, name: string, type: string) => literal(name, type, values[name]!));
}
