/**
 * A notices sender killed mid-burst, for crash.test.ts: opens the embedded store in argv[2] and
 * sends its due notices through the WhatsApp Cloud API at the sandbox given in NOTICES_SANDBOX
 * (JSON: url, version, phoneNumberId, accessToken, appSecret), with the vault key in NOTICES_KEY
 * (base64), a 1 s lease and a 20 s wait for the status of a send cut short, until killed. Meta's
 * webhook (statuses) is taken on NOTICES_WEBHOOK_PORT, as the API's route takes it (signature,
 * then lib/buyer-notices applyWhatsAppWebhook). It prints `ready` once both run. It closes nothing.
 */
import { createServer } from 'node:http';
import { standingOf } from '../../access/standing.ts';
import type { KeyRecord } from '../../access/index.ts';
import { DEFAULT_CONFIG_DIR, loadNoticeTemplates } from '../../config/index.ts';
import { EmbeddedKv } from '../../kv/index.ts';
import { WhatsAppChannel } from '../channels.ts';
import { BuyerNotices } from '../service.ts';
import { NoticeStore } from '../store.ts';
import { ContactVault } from '../vault.ts';
import { applyWhatsAppWebhook, signedByMeta } from '../whatsapp-webhook.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: send-child.ts DIR');
const sandbox = JSON.parse(process.env.NOTICES_SANDBOX ?? '{}') as { url: string; version: string; phoneNumberId: string; accessToken: string; appSecret: string };
const key = JSON.parse(process.env.NOTICES_KEY_RECORD ?? '{}') as KeyRecord;
const templates = loadNoticeTemplates(DEFAULT_CONFIG_DIR);
const kv = new EmbeddedKv(dir);
const channel = new WhatsAppChannel({ apiUrl: sandbox.url, version: sandbox.version, phoneNumberId: sandbox.phoneNumberId, accessToken: sandbox.accessToken, templates });
const notices = new BuyerNotices({
  store: new NoticeStore(kv), vault: new ContactVault(kv, Buffer.from(process.env.NOTICES_KEY ?? '', 'base64')), templates,
  keyOf: async () => key, standingOf: (k, ms) => standingOf(k, new Date(ms)), channelsFor: () => ({ whatsapp: channel }),
  allowanceOf: () => 1_000_000, shopNameOf: async () => 'Crash Test Store', carrierNameOf: () => 'Delhivery',
  pageLinkOf: async (_p, _m, carrier, awb) => `https://track.example.in/t/${carrier}${awb}`, unsubscribeUrlOf: () => 'https://track.example.in/u',
  // The wait for a status outlasts a second sender's start on a busy machine, as Meta's outlasts a restart.
  leaseMs: 1_000, idleMs: 50, inDoubtWaitMs: 20_000,
});
const webhook = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    if (!signedByMeta(raw, req.headers['x-hub-signature-256'], sandbox.appSecret)) { res.writeHead(400).end(); return; }
    applyWhatsAppWebhook(JSON.parse(raw.toString('utf8')), notices).then(() => res.writeHead(200).end(), () => res.writeHead(500).end());
  });
});
webhook.listen(Number(process.env.NOTICES_WEBHOOK_PORT), '127.0.0.1', () => {
  notices.start();
  process.stdout.write('ready\n');
});
