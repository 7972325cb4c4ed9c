/** The shipments CSV cell by cell: nothing a spreadsheet could run as a formula, under any separator. */
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { requireAwb } from '../schemas/index.ts';
import { missingShipment } from './shipment.ts';
import { SHIPMENT_CSV_COLUMNS } from './schemas.ts';
import { csvCell, shipmentCsvLine } from './views.ts';

/** A cell a spreadsheet runs as a formula (leading spaces and quotes are skipped by some). */
const FORMULA_START = /^[" ]*[=+\-@\t\r]/;

/** The line read back as written (RFC 4180, comma). */
const cells = (line: string) => (parse(line) as string[][])[0]!;
/** The worst reading under another separator: split on it, a quote being no protection. */
const naiveCells = (line: string, delimiter: string) => line.split(delimiter);

describe('shipments CSV escaping (issue 29)', () => {
  const hostile = missingShipment(
    {
      awb: requireAwb('-A1-B1'), carrier: 'delhivery', candidates: [], order_id: "ORD-7;=cmd|' /C calc'!A0;", payment_mode: 'cod',
      order_value_inr: null, promised_by_ms: null,
    },
    'delhivery', 'not_found', null,
  );
  const line = shipmentCsvLine(hostile);

  it('quotes the ;-holding order id, neutralises the cell it would start under ;, and prefixes the AWB', () => {
    expect(line.startsWith(`'-A1-B1,delhivery,"ORD-7;'=cmd|' /C calc'!A0;",cod,`)).toBe(true);
    for (const delimiter of [',', ';', '\t']) {
      expect(naiveCells(line.trimEnd(), delimiter).filter((c) => FORMULA_START.test(c)), `split on ${JSON.stringify(delimiter)}`).toEqual([]);
    }
    // Read back with the comma it was written with: every column in place, the values intact but for the 's.
    const read = cells(line.trimEnd());
    expect(read).toHaveLength(SHIPMENT_CSV_COLUMNS.length);
    expect(read.filter((c) => FORMULA_START.test(c))).toEqual([]);
    expect(read.slice(0, 3)).toEqual(["'-A1-B1", 'delhivery', "ORD-7;'=cmd|' /C calc'!A0;"]);
  });

  it('escapes each dangerous start and each separator, and leaves plain values alone', () => {
    expect(['=1+2', '+1', '-1', '@SUM(A1)', '\tx', '\rx'].map(csvCell)).toEqual(["'=1+2", "'+1", "'-1", "'@SUM(A1)", "\"'\tx\"", "\"'\rx\""]);
    expect(['a,b', 'a;b', 'a\tb', 'a"b', 'a\nb'].map(csvCell)).toEqual(['"a,b"', '"a;b"', '"a\tb"', '"a""b"', '"a\nb"']);
    // A cell a spreadsheet would start inside the text, after any separator, quotes and spaces skipped.
    expect(['x,=1', 'x;+1', 'x\t@A', 'x;"-1', 'x; =1', 'x\n=1'].map(csvCell)).toEqual(['"x,\'=1"', '"x;\'+1"', '"x\t\'@A"', '"x;""\'-1"', '"x; \'=1"', '"x\n\'=1"']);
    expect([csvCell('ORD-1;A-2'), csvCell('upstream_error: delhivery, bluedart could not be reached')]).toEqual(['"ORD-1;A-2"', '"upstream_error: delhivery, bluedart could not be reached"']);
    expect([csvCell('ORD-1'), csvCell('1234567890104'), csvCell(null), csvCell(-1.5), csvCell(false)]).toEqual(['ORD-1', '1234567890104', '', '-1.5', 'false']);
  });
});
