import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlIdentifier, sqlInt, sqlPairList, sqlString, sqlStringList } from './sql.ts';
import { createTestDatabase, rowsOf, type TestDatabase } from './testutil/database.ts';

const ALL_CONTROL_CHARACTERS = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');

const NASTY = [
  '',
  "'",
  "''",
  "\\'",
  '\\',
  '\\\\',
  'ends with a backslash\\',
  "O'Brien's \"quoted\" `ticked`",
  "'; DROP TABLE strings; --",
  "x' OR '1'='1",
  'NUL \0 in the middle',
  '\0',
  ALL_CONTROL_CHARACTERS,
  'tab\tnew\nline\rcarriage',
  '\\0 \\n \\t \\x41 (escape sequences as text)',
  '{name:String} ? $1 %s', // placeholder look-alikes
  '/* not a comment */ -- nor this',
  'हिन्दी पिनकोड ११०००१',
  'தமிழ் ಕನ್ನಡ বাংলা',
  'emoji 🚚📦 and flags 🇮🇳',
  'combining é (e + U+0301), zero-width \u200b\u200d, BOM \ufeff, line sep \u2028 \u2029',
  'right-to-left \u202e reversed',
  '\u007f DEL and \u0085 NEL',
  'x'.repeat(10_000),
];

describe('sqlString against the real ClickHouse', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    await db.client.command({ query: 'CREATE TABLE strings (id UInt32, s String) ENGINE = MergeTree() ORDER BY id' });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('round-trips every nasty string through an INSERT ... VALUES and a SELECT ... WHERE', async () => {
    const values = NASTY.map((s, id) => `(${sqlInt(id)}, ${sqlString(s)})`).join(', ');
    await db.client.command({ query: `INSERT INTO strings (id, s) VALUES ${values}` });
    const stored = await rowsOf<{ id: number; s: string }>(db.client, 'SELECT id, s FROM strings ORDER BY id');
    expect(stored.map((r) => r.s)).toEqual(NASTY);
    for (const [id, s] of NASTY.entries()) {
      const found = await rowsOf<{ id: number }>(db.client, `SELECT id FROM strings WHERE s = ${sqlString(s)} ORDER BY id`);
      // '' and its doubles are distinct strings, so each literal matches exactly its own row.
      expect(found.map((r) => Number(r.id)), JSON.stringify(s).slice(0, 60)).toEqual([id]);
    }
  });

  it('matches strings written by JSONEachRow (how the writer stores them)', async () => {
    await db.client.command({ query: 'CREATE TABLE json_strings (id UInt32, s String) ENGINE = MergeTree() ORDER BY id' });
    await db.client.insert({ table: 'json_strings', values: NASTY.map((s, id) => ({ id, s })), format: 'JSONEachRow' });
    const found = await rowsOf<{ id: number }>(db.client, `SELECT id FROM json_strings WHERE s IN ${sqlStringList(NASTY)} ORDER BY id`);
    expect(found.map((r) => Number(r.id))).toEqual(NASTY.map((_, i) => i));
    const pairs = await rowsOf<{ c: string }>(db.client, `SELECT count() AS c FROM json_strings WHERE (toString(id), s) IN ${sqlPairList(NASTY.map((s, i) => [String(i), s] as const))}`);
    expect(Number(pairs[0]?.c)).toBe(NASTY.length);
  });

  it('a quoted identifier addresses exactly that table', async () => {
    const rows = await rowsOf<{ c: string }>(db.client, `SELECT count() AS c FROM ${sqlIdentifier(db.target.database)}.${sqlIdentifier('strings')}`);
    expect(Number(rows[0]?.c)).toBe(NASTY.length);
  });
});
