/**
 * Where notices go: SMTP when `SMTP_URL` is set (nodemailer), otherwise `.eml` files under
 * `DATA_DIR/outbox/` so the embedded default works without a mail server and an operator can read
 * (or forward) what would have been sent.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import nodemailer from 'nodemailer';
import type { NoticeMessage } from './compose.ts';

/** Default sender; set MAIL_FROM (see `noticeSettingsOf`) to one your SMTP relay accepts. */
export const DEFAULT_MAIL_FROM = 'Tracking API <notices@localhost>';

export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  /** Where mail goes, for logs: the SMTP host (never its credentials) or the outbox directory. */
  readonly target: string;
  /** Throws when nothing could be sent right now (SMTP unreachable, outbox not writable). */
  verify(): Promise<void>;
  /** Sends one message; `id` is the Message-ID, `location` the .eml file for the outbox. */
  send(message: NoticeMessage): Promise<{ id: string; location?: string }>;
  close(): void;
}

export interface MailerEnv {
  /** `smtp://[user:pass@]host:port` or `smtps://…` (nodemailer connection URL). */
  SMTP_URL?: string | undefined;
  /** The outbox is `<DATA_DIR>/outbox/` when SMTP_URL is not set. */
  DATA_DIR: string;
}

export interface MailerOptions {
  from?: string;
}

/** Conventional outbox directory under DATA_DIR. */
export function outboxDir(dataDir: string): string {
  return join(resolve(dataDir), 'outbox');
}

/** An error the mail server answered with a permanent (5xx) refusal: retrying cannot help. */
export function isPermanentMailError(err: unknown): boolean {
  const e = err as { permanent?: unknown; responseCode?: unknown } | null;
  if (e && typeof e.permanent === 'boolean') return e.permanent;
  return typeof e?.responseCode === 'number' && e.responseCode >= 500;
}

function smtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport({
    url,
    // Fail fast: the job retries on its next run rather than hanging an hourly round for minutes.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  }, { from });
  const parsed = new URL(url);
  return {
    kind: 'smtp',
    target: `${parsed.protocol}//${parsed.host}`,
    async verify() {
      await transport.verify();
    },
    async send(message) {
      const info = await transport.sendMail(message);
      return { id: info.messageId };
    },
    close() {
      transport.close();
    },
  };
}

function outboxMailer(dir: string, from: string): Mailer {
  // nodemailer builds the MIME message exactly as it would for SMTP; we only store it.
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' }, { from });
  return {
    kind: 'outbox',
    target: dir,
    async verify() {
      mkdirSync(dir, { recursive: true });
      accessSync(dir, constants.W_OK);
    },
    async send(message) {
      const info = await transport.sendMail(message);
      mkdirSync(dir, { recursive: true });
      // Sortable by time; written under a temporary name and renamed so no reader sees half a file.
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`;
      const path = join(dir, name);
      writeFileSync(`${path}.tmp`, info.message as Buffer);
      renameSync(`${path}.tmp`, path);
      return { id: info.messageId, location: path };
    },
    close() {
      transport.close();
    },
  };
}

/** SMTP when `SMTP_URL` is set, else the file outbox under `DATA_DIR/outbox/`. */
export function createMailer(env: MailerEnv, options: MailerOptions = {}): Mailer {
  const from = options.from ?? DEFAULT_MAIL_FROM;
  return env.SMTP_URL ? smtpMailer(env.SMTP_URL, from) : outboxMailer(outboxDir(env.DATA_DIR), from);
}
