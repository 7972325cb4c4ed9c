import { describe, expect, it } from 'vitest';
import { jsonEachRowStream, jsonEachRowText } from './json-each-row.ts';

/** The body as first built: each row's JSON without its `}`, then the stamp and `}` + newline. */
function reference(rows: object[], extra: Record<string, string | number>): string {
  const closing = `${Object.entries(extra).map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`).join('')}}\n`;
  return rows.map((row) => JSON.stringify(row).slice(0, -1) + closing).join('');
}

describe('JSONEachRow body', () => {
  const texts = ['Delivered', 'नई दिल्ली', 'Agent 😀 "quoted" \\ back\nslash', '\ud83d lone', 'x'.repeat(3_000_000)];
  const rows = Array.from({ length: 4_500 }, (_, i) => ({ id: i, text: i === 4_100 ? texts[4]! : texts[i % 4]!, n: i % 7 === 0 ? null : i / 3 }));
  const extra = { ingested_at: '2026-11-21 10:00:00', ingest_version: 1_795_000_000_000 };

  it('is the rows JSON with the stamp appended, across chunks, multi-byte text and a row bigger than a chunk buffer', async () => {
    const expected = reference(rows, extra);
    expect(jsonEachRowText(rows, extra)).toBe(expected);
    const parts: Buffer[] = [];
    for await (const part of jsonEachRowStream(rows, extra)) parts.push(part as Buffer);
    expect(parts.length).toBe(3);
    expect(Buffer.concat(parts).equals(Buffer.from(expected))).toBe(true);
  });

  it('closes rows with a bare `}` when there is no stamp', () => {
    expect(jsonEachRowText([{ a: 1 }, { b: 'x' }])).toBe('{"a":1}\n{"b":"x"}\n');
    expect(jsonEachRowText([])).toBe('');
  });
});
