/**
 * The customer notices' rules end to end over one state store (embedded here, Redis in the services
 * test): real channels (HTTP to the sandbox's Cloud API and Flow API, SMTP to its mail server), a
 * clock the test moves, events made by push's own functions from the product's normalized records.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../access/index.ts';
import { standingOf } from '../../access/standing.ts';
import { DEFAULT_CONFIG_DIR, loadNoticeTemplates } from '../../config/index.ts';
import type { Kv } from '../../kv/index.ts';
import { changeOf, EMPTY_SNAPSHOT, snapshotOf, trackingEvent, type ShipmentSnapshot, type WebhookEvent } from '../../push/index.ts';
import { startMessagingSandbox, type RunningMessaging } from '../../sandbox/messaging.ts';
import { journeyPoll, makePoll } from '../../testutil/polls.ts';
import { answer } from '../../testutil/product.ts';
import { EmailChannel, Msg91SmsChannel, WhatsAppChannel } from '../channels.ts';
import type { NoticeChannel } from '../contact.ts';
import { noticeOf, type NoticeKind } from '../kinds.ts';
import { BuyerNotices } from '../service.ts';
import { NoticeStore } from '../store.ts';
import { ContactVault } from '../vault.ts';

export interface NoticesHarness {
  name: string;
  /** A fresh store of its own (a namespace or a directory), and how to drop it. */
  open(): Promise<{ kv: Kv; cleanup(): Promise<void> }>;
}

const templates = loadNoticeTemplates(DEFAULT_CONFIG_DIR);
const PREFIX = 'trk_test_N0tic3s';
const ist = (text: string) => Date.parse(`${text}+05:30`);

function keyRecord(plan: KeyRecord['plan'] = 'growth'): KeyRecord {
  return {
    prefix: PREFIX, hash: 'a'.repeat(64), mode: 'test', email: 'owner@example.com', plan, status: 'active',
    period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-31T00:00:00.000Z', lookups_limit: 4000, daily_quota: 800, burst_per_second: 10,
    created_at: '2026-11-01T00:00:00.000Z', renewed_at: null, notices_sent: {},
  };
}

/** A shipment's push events along the delhivery journey, one scan more per poll (all of them: the test picks). */
function journeyEvents(awb: string): WebhookEvent[] {
  const full = { ...journeyPoll('delhivery', 3), awb };
  const scans = [...full.scans].sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
  let before: ShipmentSnapshot = { ...EMPTY_SNAPSHOT, polled_ms: 0 };
  const events: WebhookEvent[] = [];
  scans.forEach((_, i) => {
    const poll = makePoll({ ...full, scans: scans.slice(0, i + 1), polled_at: new Date(Date.parse(full.polled_at) + i * 1000).toISOString() });
    const record = answer(poll);
    const change = changeOf(before, record);
    before = snapshotOf(record, Date.parse(poll.polled_at));
    if (change) {
      events.push(trackingEvent({
        keyPrefix: PREFIX, mode: 'test', type: change.type, sequence: events.length + 1, previous: change.previous, newEvents: change.newEvents,
        tracking: record, atMs: Date.parse(poll.polled_at),
      }));
    }
  });
  return events;
}

/** The first event that asks for a notice of this kind. */
const eventOf = (events: readonly WebhookEvent[], kind: NoticeKind) => events.find((e) => noticeOf(e)?.kind === kind)!;

export function noticesSuite(harness: NoticesHarness): void {
  describe(`customer notices (${harness.name})`, () => {
    let sandbox: RunningMessaging;
    let kv: Kv;
    let cleanup: () => Promise<void>;
    let now: number;
    let key: KeyRecord;
    let allowance: number;
    let spent: string[];
    let notices: BuyerNotices;
    let vault: ContactVault;

    beforeAll(async () => { sandbox = await startMessagingSandbox({ templates }); });
    afterAll(async () => { await sandbox.close(); });
    beforeEach(async () => {
      ({ kv, cleanup } = await harness.open());
      sandbox.clear();
      now = ist('2026-11-28T11:00:00');
      key = keyRecord();
      allowance = 1000;
      spent = [];
      vault = new ContactVault(kv, randomBytes(32));
      const channels = {
        whatsapp: new WhatsAppChannel({ apiUrl: sandbox.url, ...sandbox.whatsapp, templates }),
        sms: new Msg91SmsChannel({ apiUrl: sandbox.url, authKey: sandbox.msg91.authKey, templates }),
        email: new EmailChannel({ smtpUrl: sandbox.smtpUrl, from: 'Notices <notices@example.com>' }),
      };
      notices = new BuyerNotices({
        store: new NoticeStore(kv), vault, templates,
        keyOf: async (prefix) => (prefix === key.prefix ? key : null), standingOf: (k, ms) => standingOf(k, new Date(ms)),
        channelsFor: () => channels, allowanceOf: () => allowance,
        shopNameOf: async () => 'Chai Point Store', carrierNameOf: () => 'Delhivery',
        pageLinkOf: async (_p, _m, carrier, awb) => `https://track.example.in/t/${carrier}-${awb}`,
        unsubscribeUrlOf: () => 'https://track.example.in/notices/unsubscribe/tok',
        onAllowanceSpent: async (k) => { spent.push(k.prefix); },
        clock: () => now,
      });
    });
    afterEach(async () => { await cleanup(); });

    const watch = (awb: string, channels: NoticeChannel[], language = 'en', phone = '+919876543210', email: string | null = 'ravi@example.com') =>
      vault.put(PREFIX, 'delhivery', awb, { channels, language, contact: { phone, email } }, now);
    /** Runs due notices until none is due now. */
    const drain = async () => { while ((await notices.runDue()) > 0) { /* claimed ones settle or move later */ } };
    const listed = async (awb: string) => (await notices.store.list(PREFIX, { carrier: 'delhivery', awb }, 0, 50)).items;

    it('sends each channel exactly its registered template with the notice\'s variables, in the customer\'s language', async () => {
      const events = journeyEvents('2000000000011');
      const picked = eventOf(events, 'picked_up');
      await watch('2000000000011', ['whatsapp'], 'hi');
      await watch('2000000000012', ['sms'], 'ta');
      await watch('2000000000013', ['email'], 'bn');
      for (const awb of ['2000000000011', '2000000000012', '2000000000013']) {
        await notices.enqueue([{ ...picked, awb, body: picked.body.replaceAll(picked.awb!, awb) }]);
      }
      await drain();
      const got = sandbox.received();
      const wa = got.find((m) => m.channel === 'whatsapp')!;
      expect(wa).toMatchObject({ template: templates.whatsapp.picked_up, language: 'hi', to: '+91******3210' });
      expect(wa.variables).toMatchObject({ shop: 'Chai Point Store', awb: '2000000000011', carrier: 'Delhivery', link: 'https://track.example.in/t/delhivery-2000000000011' });
      expect(wa.text).toContain('उठा लिया');
      expect(wa.reference).toMatch(/^trk_test_N0tic3s\|ntc_/);
      const sms = got.find((m) => m.channel === 'sms')!;
      expect(sms).toMatchObject({ template: templates.sms.picked_up.ta, language: 'ta', headers: { sender: templates.dlt.sender } });
      expect(Object.keys(sms.variables).sort()).toEqual(['awb', 'carrier', 'day', 'link', 'shop']);
      const mail = got.find((m) => m.channel === 'email')!;
      expect(mail).toMatchObject({ to: 'r***@example.com' });
      expect(mail.template).toContain('পার্সেল');
      expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      expect(mail.headers['list-unsubscribe']).toBe('<https://track.example.in/notices/unsubscribe/tok>');
      expect((await listed('2000000000011'))[0]).toMatchObject({ event: 'picked_up', channel: 'whatsapp', status: 'sent', language: 'hi' });
    });

    it('tells each event once however often it arrives, and a failed attempt with its reason', async () => {
      const events = journeyEvents('2000000000021');
      await watch('2000000000021', ['sms']);
      await notices.enqueue(events);
      await notices.enqueue(events);
      await drain();
      const kinds = (await listed('2000000000021')).map((n) => n.event).reverse();
      expect(kinds).toEqual(['picked_up', 'failed_attempt', 'failed_attempt', 'out_for_delivery', 'delivered']);
      const failed = sandbox.received().find((m) => m.template === templates.sms.failed_attempt.en)!;
      expect(failed.variables.reason).toBe('nobody was available');
      // Five notices of one shipment on one day: the cap of four leaves the last one unsent.
      expect((await listed('2000000000021'))[0]).toMatchObject({ event: 'delivered', status: 'suppressed', detail: 'daily cap' });
      expect(sandbox.received()).toHaveLength(4);
    });

    it('falls back to the next channel when one refuses, and retries one that fails for a moment', async () => {
      const events = journeyEvents('2000000000031');
      const ofd = eventOf(events, 'out_for_delivery');
      // A number not on WhatsApp (the sandbox refuses those ending 0000): SMS takes it.
      await watch('2000000000031', ['whatsapp', 'sms', 'email'], 'en', '+919876540000');
      await notices.enqueue([ofd]);
      await drain();
      expect(sandbox.received().map((m) => m.channel)).toEqual(['sms']);
      expect((await listed('2000000000031'))[0]).toMatchObject({ channel: 'sms', status: 'sent' });

      await watch('2000000000032', ['whatsapp', 'sms']);
      sandbox.failNext('whatsapp', 1, true);
      await notices.enqueue([{ ...ofd, awb: '2000000000032', body: ofd.body.replaceAll(ofd.awb!, '2000000000032') }]);
      await drain();
      expect((await listed('2000000000032'))[0]).toMatchObject({ status: 'queued', detail: 'whatsapp HTTP 500 code 131000' });
      now += 20_000;
      await drain();
      expect((await listed('2000000000032'))[0]).toMatchObject({ channel: 'whatsapp', status: 'sent' });
    });

    it('defers all but out for delivery in quiet hours, and sends them when they end', async () => {
      const events = journeyEvents('2000000000041');
      await watch('2000000000041', ['whatsapp']);
      now = ist('2026-11-28T22:30:00');
      await notices.enqueue([eventOf(events, 'out_for_delivery'), eventOf(events, 'picked_up')]);
      await drain();
      expect(sandbox.received().map((m) => m.template)).toEqual([templates.whatsapp.out_for_delivery]);
      expect((await listed('2000000000041')).find((n) => n.event === 'picked_up')).toMatchObject({ status: 'deferred', detail: 'quiet hours' });
      now = ist('2026-11-29T09:00:00');
      await drain();
      expect(sandbox.received().map((m) => m.template)).toEqual([templates.whatsapp.out_for_delivery, templates.whatsapp.picked_up]);
    });

    it('sends nothing more to a number or address that said STOP, for that key', async () => {
      const events = journeyEvents('2000000000051');
      await watch('2000000000051', ['whatsapp', 'sms', 'email']);
      await notices.store.stop(PREFIX, '+919876543210');
      await notices.enqueue([eventOf(events, 'picked_up')]);
      await drain();
      // The phone's channels are stopped; the address still gets it.
      expect(sandbox.received().map((m) => m.channel)).toEqual(['email']);
      await notices.store.stop(PREFIX, 'ravi@example.com');
      await notices.enqueue([eventOf(events, 'out_for_delivery')]);
      await drain();
      expect(sandbox.received()).toHaveLength(1);
      expect((await listed('2000000000051'))[0]).toMatchObject({ event: 'out_for_delivery', status: 'suppressed', detail: 'customer stopped notices' });
    });

    it('stops at the plan\'s allowance and tells the key holder once', async () => {
      allowance = 1;
      const events = journeyEvents('2000000000061');
      await watch('2000000000061', ['sms']);
      await notices.enqueue(events);
      await drain();
      expect(sandbox.received()).toHaveLength(1);
      expect((await listed('2000000000061')).filter((n) => n.status === 'suppressed').map((n) => n.detail)).toContain('allowance spent');
      expect(spent).toEqual([PREFIX]);
      key = keyRecord('starter');
      allowance = 0;
      await watch('2000000000062', ['sms']);
      await notices.enqueue([{ ...events[0]!, awb: '2000000000062', body: events[0]!.body.replaceAll(events[0]!.awb!, '2000000000062') }]);
      await drain();
      expect(spent).toEqual([PREFIX]);
    });

    it('keeps no contact after the shipment ended a week ago, and none once erased', async () => {
      const events = journeyEvents('2000000000071');
      await watch('2000000000071', ['sms']);
      await notices.enqueue(events);
      expect(await vault.view(PREFIX, 'delhivery', '2000000000071')).not.toBeNull();
      now += 8 * 24 * 3600_000;
      await drain();
      expect(await vault.view(PREFIX, 'delhivery', '2000000000071')).toBeNull();
      await watch('2000000000072', ['sms']);
      expect(await vault.erase(PREFIX, 'delhivery', '2000000000072')).toBe(true);
      expect(await vault.open(PREFIX, 'delhivery', '2000000000072')).toBeNull();
    });
  });
}
