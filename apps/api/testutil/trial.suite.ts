/**
 * The self-serve trial page (contracts.md; issue 29 finding 9): an HTML form; one trial key per
 * mailbox, sent by e-mail; the same answer whether a key was issued or the mailbox had one, both
 * counted against the limits. Run on the embedded store by trial.test.ts and on Redis by
 * trial.services.test.ts (the trial index and the throttle live there).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyIn, mailsTo } from './mail.ts';
import { DAY_MS, HOUR_MS, startApiHarness, type ApiHarness, type StoreKind } from './harness.ts';

function post(h: ApiHarness, email: string | null, remoteAddress = '203.0.113.7') {
  return h.app.inject({
    method: 'POST', url: '/trial', remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: email === null ? '' : new URLSearchParams({ email }).toString(),
  });
}

export function trialSuite(store: StoreKind): void {
  describe(`trial page (${store} store)`, () => {
    let h: ApiHarness;
    beforeEach(async () => { h = await startApiHarness({ store }); });
    afterEach(() => h.close());

    /** The one e-mail `email` got; its key (null for the "already had its trial" e-mail). */
    async function onlyMail(email: string): Promise<{ raw: string; key: string | null }> {
      const mails = await mailsTo(h.dataDir, email);
      expect(mails).toHaveLength(1);
      return { raw: mails[0]!, key: keyIn(mails[0]!) };
    }

    it('GET /trial is an HTML page with an e-mail form posting to /trial', async () => {
      const res = await h.app.inject({ method: 'GET', url: '/trial' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toMatch(/^<!doctype html>/i);
      expect(res.body).toMatch(/<form method="post" action="\/trial">/);
      expect(res.body).toMatch(/<input[^>]+name="email"[^>]+type="email"/);
      expect(res.body).not.toMatch(/trk_(live|test)_/);
    });

    it('POST e-mails a trial key, once, to the address; the page never shows it; the key works on /v1/usage', async () => {
      const res = await post(h, 'new.user@example.com');
      expect(res.statusCode).toBe(202);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain("we've e-mailed it");
      expect(res.body).not.toMatch(/trk_(live|test)_/);
      const { raw, key } = await onlyMail('new.user@example.com');
      expect(key).not.toBeNull();
      expect(raw).toContain('we keep only its hash');
      const usage = await h.usage(key!);
      expect(usage).toEqual({
        key_prefix: key!.slice(0, 16),
        plan: 'trial',
        status: 'active',
        period: { start: h.clock.iso(), end: h.clock.iso(14 * DAY_MS), lookups_used: 0, lookups_limit: 100, lookups_remaining: 100 },
        rate_limits: { burst_per_second: 5, daily_quota: 100 },
        // Trial keys notify customers through the sandbox providers only (config/plans.yaml).
        notices: { used: 0, limit: 100 },
      });
      const view = await h.admin('GET', `/admin/keys/${key!.slice(0, 16)}`);
      expect(view.json()).toMatchObject({ email: 'new.user@example.com', plan: 'trial' });
      expect(view.body).not.toContain(key);
    });

    it('an address that had its trial gets the same status and page as a new one; its e-mail has no key (finding 9)', async () => {
      const issued = await post(h, 'Same.Person@example.com');
      const { key } = await onlyMail('Same.Person@example.com');
      for (const again of ['same.person@EXAMPLE.com', '  same.person+again@example.com ']) {
        const res = await post(h, again);
        expect({ status: res.statusCode, type: res.headers['content-type'], body: res.body }).toEqual({ status: issued.statusCode, type: issued.headers['content-type'], body: issued.body });
        const mail = await onlyMail(again.trim());
        expect(mail.key).toBeNull();
        expect(mail.raw).toContain('already had its trial');
        expect(mail.raw).toContain(key!.slice(0, 16));
      }
    });

    it('plus-addressed and dotted Gmail spellings of one mailbox get one trial key (finding 9)', async () => {
      const spellings = ['asha.rao@gmail.com', 'asharao+1@gmail.com', 'a.sha.rao+2@googlemail.com'];
      // From three networks, so only the mailbox's own limit can be what counts them together.
      for (const [i, email] of spellings.entries()) expect((await post(h, email, `198.51.100.${10 + i}`)).statusCode).toBe(202);
      const mails = (await Promise.all(spellings.map((e) => mailsTo(h.dataDir, e)))).flat();
      expect(mails).toHaveLength(3);
      expect(mails.map(keyIn).filter((k) => k !== null)).toHaveLength(1);
      // The mailbox's own limit: three e-mails a day from this page, whichever network asks.
      const fourth = await post(h, 'AshaRao+4@Gmail.com', '198.51.100.99');
      expect(fourth.statusCode).toBe(429);
      expect(await mailsTo(h.dataDir, 'AshaRao+4@Gmail.com')).toEqual([]);
    });

    it.each([
      ['not an address', 'not-an-email'],
      ['no domain', 'someone@'],
      ['empty', ''],
      ['markup', '<script>alert(1)</script>@example.com'],
    ])('a bad e-mail (%s) → 400 page with the form again', async (_name, email) => {
      const res = await post(h, email);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('valid e-mail');
      expect(res.body).toMatch(/<form method="post" action="\/trial">/);
      expect(res.body).not.toContain('<script>');
    });

    it('no body at all → 400 page', async () => {
      const res = await h.app.inject({ method: 'POST', url: '/trial' });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('valid e-mail');
    });

    it('more than 5 requests an hour from one address → 429 page with Retry-After; other addresses and the next hour are unaffected', async () => {
      for (let i = 0; i < 5; i++) expect((await post(h, `user${i}@example.com`, '198.51.100.1')).statusCode).toBe(202);
      expect((await post(h, 'user5@example.com', '198.51.100.1')).statusCode).toBe(429);

      h.clock.advance(10 * 60_000);
      const refused = await post(h, 'user5@example.com', '198.51.100.1');
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(refused.headers['retry-after']).toBe(String(50 * 60));
      expect(refused.body).not.toMatch(/trk_(live|test)_/);

      expect((await post(h, 'user5@example.com', '198.51.100.2')).statusCode).toBe(202);
      h.clock.advance(HOUR_MS - 10 * 60_000);
      expect((await post(h, 'user6@example.com', '198.51.100.1')).statusCode).toBe(202);
    });

    it('"already had its trial" answers use the address allowance as issuing does, so addresses cannot be probed without limit (finding 9); 400 answers do not', async () => {
      expect((await post(h, 'first@example.com', '198.51.100.9')).statusCode).toBe(202);
      for (let i = 0; i < 6; i++) expect((await post(h, 'broken', '198.51.100.9')).statusCode).toBe(400);
      for (let i = 0; i < 4; i++) expect((await post(h, `probe${i}@example.com`, '198.51.100.9')).statusCode).toBe(202);
      // The sixth request of the hour is refused, whether the address had its trial or not.
      for (const email of ['first@example.com', 'never-seen@example.com']) {
        const refused = await post(h, email, '198.51.100.9');
        expect(refused.statusCode).toBe(429);
      }
    });
  });
}
