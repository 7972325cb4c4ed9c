/**
 * The analysts' questions, read from the guide itself (docs/analysts.md): each is a fenced block
 * `sql q<N>` under a bold "**N. Title**" line. One source: the page shows what `cli sql` runs and
 * the tests check. Read with a pattern, not a Markdown parser: the blocks' form is fixed and
 * checked by the guide's test, and the CLI must not need a devDependency.
 */
import { readFileSync } from 'node:fs';

export const GUIDE_PATH = new URL('../../../docs/analysts.md', import.meta.url);

export interface GuideQuestion {
  id: string;
  title: string;
  sql: string;
}

export function guideQuestions(markdown: string = readFileSync(GUIDE_PATH, 'utf8')): GuideQuestion[] {
  const found: GuideQuestion[] = [];
  for (const match of markdown.matchAll(/^\*\*(\d+)\. ([^*]+)\*\*[^\n]*\n\n```sql (q\d+)\n([\s\S]*?)```/gm)) {
    const [, number, title, id, sql] = match;
    if (id !== `q${number}`) throw new Error(`docs/analysts.md: question ${number} has the block ${id}`);
    found.push({ id: id!, title: title!.trim().replace(/[:.]$/, ''), sql: sql!.trim() });
  }
  return found;
}

/** `q3`, `3` or `Q3` → the question, or null. */
export function findQuestion(questions: readonly GuideQuestion[], name: string): GuideQuestion | null {
  const id = /^q?(\d+)$/i.exec(name.trim())?.[1];
  return id === undefined ? null : questions.find((q) => q.id === `q${id}`) ?? null;
}
