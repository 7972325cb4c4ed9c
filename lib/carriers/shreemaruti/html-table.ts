/**
 * Reads the tables of an HTML page into rows of cell texts, the way a browser would see them:
 * unclosed `<td>`/`<tr>` end at the next cell or row, nested tables are separate tables, markup
 * inside cells is dropped, entities are decoded. A table whose `</table>` never came (a cut-off
 * page) is marked open. No new packages can be installed here, so this is a small tag tokenizer.
 */

export interface HtmlCell {
  text: string;
  /** A `<th>` cell. */
  header: boolean;
}

export interface HtmlTable {
  rows: HtmlCell[][];
  /** False when the page ended before `</table>`. */
  closed: boolean;
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ndash: '–', mdash: '—', hellip: '…', copy: '©',
};

const ENTITY = /&(#[xX][0-9a-fA-F]{1,8}|#\d{1,8}|[a-zA-Z]{2,8});/g;

function decodeEntity(match: string, name: string): string {
  if (name.startsWith('#')) {
    const hex = name[1] === 'x' || name[1] === 'X';
    const code = Number.parseInt(name.slice(hex ? 2 : 1), hex ? 16 : 10);
    const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
    return valid ? String.fromCodePoint(code) : '\uFFFD';
  }
  return NAMED_ENTITIES[name.toLowerCase()] ?? match;
}

export function decodeEntities(text: string): string {
  return text.replace(ENTITY, decodeEntity);
}

/** Trimmed text with runs of white space (including no-break spaces) made one space. */
export function cleanCellText(text: string): string {
  return decodeEntities(text).replace(/[\s\u00a0]+/g, ' ').trim();
}

// Tags, comments and doctype/CDATA-like declarations; every alternative consumes at least "<x".
const TOKEN = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>|<!--[\s\S]*?(?:-->|$)|<![^>]*>/g;
const RAW_TEXT_ELEMENTS = new Set(['script', 'style', 'textarea', 'title']);
// Tags that separate words when a browser renders a cell.
const SPACING_ELEMENTS = new Set(['br', 'p', 'div', 'li', 'span', 'hr']);

interface OpenTable {
  table: HtmlTable;
  row: HtmlCell[] | null;
  cell: { parts: string[]; header: boolean } | null;
}

/** Every table of the page in document order (outer tables before the tables nested in them). */
export function readTables(html: string): HtmlTable[] {
  const tables: HtmlTable[] = [];
  const open: OpenTable[] = [];
  const top = () => open[open.length - 1];

  const endCell = (t: OpenTable) => {
    if (t.cell && t.row) t.row.push({ text: cleanCellText(t.cell.parts.join('')), header: t.cell.header });
    t.cell = null;
  };
  const endRow = (t: OpenTable) => {
    endCell(t);
    if (t.row) t.table.rows.push(t.row);
    t.row = null;
  };
  const addText = (text: string) => {
    const t = top();
    if (t?.cell) t.cell.parts.push(text);
  };

  TOKEN.lastIndex = 0;
  let last = 0;
  for (let match = TOKEN.exec(html); match !== null; match = TOKEN.exec(html)) {
    addText(html.slice(last, match.index));
    last = TOKEN.lastIndex;
    const name = match[2]?.toLowerCase();
    if (name === undefined) continue; // comment or declaration
    const closing = match[1] === '/';
    if (!closing && RAW_TEXT_ELEMENTS.has(name)) {
      // Skip the element's content: "<td>" inside a script is not a cell.
      const end = html.toLowerCase().indexOf(`</${name}`, last);
      last = end < 0 ? html.length : end;
      TOKEN.lastIndex = last;
      continue;
    }
    const t = top();
    if (name === 'table') {
      if (closing) {
        if (t) {
          endRow(t);
          t.table.closed = true;
          open.pop();
        }
      } else {
        const table: HtmlTable = { rows: [], closed: false };
        tables.push(table);
        open.push({ table, row: null, cell: null });
      }
    } else if (!t) {
      continue;
    } else if (name === 'tr') {
      endRow(t);
      if (!closing) t.row = [];
    } else if (name === 'td' || name === 'th') {
      endCell(t);
      if (!closing) {
        t.row ??= [];
        t.cell = { parts: [], header: name === 'th' };
      }
    } else if (SPACING_ELEMENTS.has(name)) {
      addText(' ');
    }
  }
  addText(html.slice(last));
  // Tables the page never closed keep what they had, and stay marked open.
  for (const t of open) endRow(t);
  return tables;
}

/** The page's visible text, for messages outside tables ("No data found ..."). */
export function pageText(html: string): string {
  return cleanCellText(html.replace(TOKEN, ' '));
}
