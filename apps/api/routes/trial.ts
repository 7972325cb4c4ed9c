import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createHash } from 'node:crypto';
import { AccessError, mailboxOf } from '../../../lib/access/index.ts';
import type { ThrottleRule } from '../../../lib/throttle/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { methodNotAllowed } from '../http/errors.ts';
import { DAY_MS, HOUR_MS } from '../../../lib/time/index.ts';
import { publicBaseOf } from '../context/public-base.ts';
import { trialExistsMail, trialKeyMail } from '../pages/trial-mail.ts';
import { trialForm, trialSentPage } from '../pages/trial.ts';

/** What these routes use of the API's dependencies. */
type TrialDeps = Pick<ApiDeps, 'access' | 'clock' | 'mailer' | 'publicBaseUrl' | 'throttle' | 'trialsPerAddressPerHour'>;

const TrialFormSchema = z.object({ email: z.string().trim().max(254).pipe(z.email()) });

/** Throttle name of a mailbox: its hash, so the throttle's store holds no e-mail address. */
const mailboxId = (email: string) => `mailbox:${createHash('sha256').update(mailboxOf(email)).digest('hex').slice(0, 32)}`;

/**
 * The self-serve trial page (contracts.md; issue 29 finding 9): one trial key per mailbox, sent by
 * e-mail. Every well-formed request gets the same answer whether it issued a key or the mailbox
 * had one already, and both count against the same limits, per client address and per mailbox,
 * so the page cannot be used to find out which addresses had a trial.
 */
export function registerTrialRoutes(app: FastifyInstance, deps: TrialDeps): void {
  // Counted in the store (Redis or DATA_DIR), so a restart does not reset an address's allowance.
  const perClient: ThrottleRule = { name: 'trial', limit: deps.trialsPerAddressPerHour ?? 5, windowMs: HOUR_MS };
  // A mailbox gets few e-mails from this page, from however many client addresses they are asked.
  const perMailbox: ThrottleRule = { name: 'trial-mailbox', limit: 3, windowMs: DAY_MS };

  // The HTML form posts application/x-www-form-urlencoded: only this page parses it (the admin
  // and /v1 APIs take JSON only).
  app.register(async (trial) => {
    await trial.register(formbody);

    trial.get('/trial', async (_request, reply) => reply.type('text/html; charset=utf-8').send(trialForm()));

    trial.post('/trial', async (request, reply) => {
      // Every answer of this page may carry an e-mail address: never cached anywhere.
      reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store');
      const parsed = TrialFormSchema.safeParse(request.body ?? {});
      if (!parsed.success) return reply.code(400).send(trialForm('Please enter a valid e-mail address.'));
      const email = parsed.data.email;
      const mailer = deps.mailer;
      // Checked before a key is made: a key whose e-mail cannot go would be lost (only its hash is kept).
      const canMail = mailer ? await mailer.verify().then(() => true, () => false) : false;
      if (!mailer || !canMail) {
        request.log.error('trial: the mailer cannot send now; no trial key issued');
        return reply.code(503).send(trialForm('Trial keys are sent by e-mail, which is not possible just now. Please try again later.'));
      }

      const now = deps.clock();
      for (const [rule, who] of [[perClient, request.ip], [perMailbox, mailboxId(email)]] as const) {
        const throttled = await deps.throttle.check(rule, who, now);
        if (throttled.blocked) {
          return reply.code(429).header('Retry-After', throttled.retryAfterSeconds)
            .send(trialForm('Too many trial keys were requested from your network or for this address. Try again later.'));
        }
      }
      // Counted whatever follows: an address that had its trial costs a prober what a new one does.
      await deps.throttle.record(perClient, request.ip, now);
      await deps.throttle.record(perMailbox, mailboxId(email), now);

      const base = publicBaseOf(deps, request.server);
      let mail;
      try {
        const { key, record } = await deps.access.issueTrial({ email, mode: 'live' }, new Date(now));
        mail = trialKeyMail(email, key, record, base);
      } catch (err) {
        if (!(err instanceof AccessError && err.reason === 'trial_exists')) throw err;
        mail = trialExistsMail(email, await deps.access.findTrialByEmail(email), base);
      }
      try {
        await mailer.send(mail);
      } catch (err) {
        // Never the address (personal data) in the log; the key prefix is in the message headers.
        request.log.error({ err: { message: (err as Error).message }, key_prefix: mail.headers['X-Key-Prefix'] ?? null }, 'trial: e-mail not sent');
        return reply.code(503).send(trialForm('The e-mail could not be sent just now. Please try again later, or ask support.'));
      }
      return reply.code(202).send(trialSentPage());
    });

    methodNotAllowed(trial, '/trial', ['GET', 'POST']);
  });
}
