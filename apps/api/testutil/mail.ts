/** Test support: the e-mails the API left in its outbox (DATA_DIR/outbox, no SMTP_URL set). */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { outboxDir } from '../../../lib/notices/index.ts';

/** The raw messages addressed to `to` (exactly, as typed), oldest first, quoted-printable soft line breaks joined. */
export async function mailsTo(dataDir: string, to: string): Promise<string[]> {
  const dir = outboxDir(dataDir);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.eml')).sort();
  const raws = await Promise.all(names.map((n) => readFile(join(dir, n), 'utf8')));
  // The mailer writes the domain in lower case, the local part as given.
  const at = to.lastIndexOf('@');
  const header = `To: ${to.slice(0, at)}@${to.slice(at + 1).toLowerCase()}`;
  return raws.filter((raw) => raw.split(/\r?\n/).includes(header)).map((raw) => raw.replace(/=\r?\n/g, ''));
}

/** The API key a message carries, or null. */
export function keyIn(raw: string): string | null {
  return /\btrk_(?:live|test)_[A-Za-z0-9]{32}\b/.exec(raw)?.[0] ?? null;
}
